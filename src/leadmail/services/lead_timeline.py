"""Use case: a lead's timeline (domain/lead_timeline.py), from what is stored: the lead,
its events, the messages sent to its address and its suppression entry, each read from the
page's position and merged; never a scan of the account's messages."""

from __future__ import annotations

from leadmail.domain.errors import LeadNotFound
from leadmail.domain.lead_listing import DEFAULT_PAGE_SIZE
from leadmail.domain.lead_timeline import (
    Source,
    TimelineCursor,
    TimelineEntry,
    TimelinePage,
    created,
    merged,
    of_event,
    of_message,
    of_suppression,
)
from leadmail.domain.message_listing import STATUS_WINDOW, MessageFilter, MessageQuery
from leadmail.domain.suppressions import address_digest
from leadmail.ports.lead_events import LeadEventRepository
from leadmail.ports.leads import LeadRepository
from leadmail.ports.message_events import MessageEventRepository
from leadmail.ports.messages import MessageRepository
from leadmail.ports.suppressions import SuppressionRepository


class LeadTimeline:
    def __init__(
        self,
        leads: LeadRepository,
        events: LeadEventRepository,
        messages: MessageRepository,
        message_events: MessageEventRepository,
        suppressions: SuppressionRepository,
    ) -> None:
        self._leads = leads
        self._events = events
        self._messages = messages
        self._message_events = message_events
        self._suppressions = suppressions

    async def page(
        self,
        account_id: str,
        lead_id: str,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> TimelinePage:
        """Newest first, ``limit`` entries after ``cursor``. Raises LeadNotFound (another
        account's lead included), ValidationFailed for a cursor it did not issue. The
        messages are those sent to the lead's address as it is now."""
        after = None if cursor is None else TimelineCursor.decode(cursor)
        lead = await self._leads.get(account_id, lead_id)
        if lead is None:
            raise LeadNotFound(lead_id)
        found: list[TimelineEntry] = [created(lead)]
        events = await self._events.newest(
            account_id, lead_id, limit + 1, None if after is None else after.bound(Source.LEAD)
        )
        found += [of_event(event) for event in events]
        query = MessageQuery(
            limit=limit,
            after=None if after is None else after.bound(Source.MESSAGE),
            filter=MessageFilter(to=lead.email_key),
        )
        messages = (await self._messages.list(account_id, query, STATUS_WINDOW)).messages
        reported = await self._message_events.list_many(
            account_id, [m.message_id for m in messages]
        )
        found += [of_message(m, reported.get(m.message_id, [])) for m in messages]
        entry = await self._suppressions.get(account_id, address_digest(lead.email_key))
        if entry is not None:
            found.append(of_suppression(entry))
        return merged(found, after, limit)
