"""Everything an account holds about one person, across the memory stores: it reads and
rewrites their records in place (one event loop: no other task runs in between, so an
erasure is all or nothing here too)."""

from __future__ import annotations

from leadmail.adapters.memory.campaigns import MemoryCampaignRepository, MemoryRecipientRepository
from leadmail.adapters.memory.lead_imports import MemoryLeadImportRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.adapters.memory.message_events import MemoryMessageEventRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.adapters.memory.suppressions import MemorySuppressionRepository
from leadmail.domain.campaign_recipients import Recipient
from leadmail.domain.email import Message
from leadmail.domain.privacy import (
    DataSubject,
    Erased,
    ImportRow,
    PersonalData,
    SentMessage,
    erased_event,
    erased_message,
    erased_recipient,
    erased_row,
)
from leadmail.ports.privacy import PersonalDataRepository


class MemoryPersonalData(PersonalDataRepository):
    def __init__(
        self,
        leads: MemoryLeadRepository,
        messages: MemoryMessageRepository,
        events: MemoryMessageEventRepository,
        campaigns: MemoryCampaignRepository,
        recipients: MemoryRecipientRepository,
        imports: MemoryLeadImportRepository,
        suppressions: MemorySuppressionRepository,
    ) -> None:
        self._leads = leads
        self._messages = messages
        self._events = events
        self._campaigns = campaigns
        self._recipients = recipients
        self._imports = imports
        self._suppressions = suppressions

    def _messages_to(self, account_id: str, person: DataSubject) -> list[Message]:
        found = [
            m
            for m in self._messages._records.values()
            if m.account_id == account_id and any(person.is_mailbox(box) for box in m.to)
        ]
        return sorted(found, key=lambda m: (m.created_at, m.message_id), reverse=True)

    def _recipients_of(self, account_id: str, person: DataSubject) -> list[Recipient]:
        mine = {
            c for c, found in self._campaigns._campaigns.items() if found.account_id == account_id
        }
        found = [
            r
            for campaign_id, rows in self._recipients._rows.items()
            if campaign_id in mine
            for r in rows.values()
            if person.is_mailbox(r.email)
        ]
        return sorted(found, key=lambda r: (r.updated_at, r.campaign_id), reverse=True)

    def _rows_of(self, account_id: str, person: DataSubject) -> list[ImportRow]:
        mine = [i for i in self._imports._imports.values() if i.account_id == account_id]
        mine.sort(key=lambda i: (i.created_at, i.import_id), reverse=True)
        return [
            ImportRow(i.import_id, row)
            for i in mine
            for row in self._imports._errors.get(i.import_id, [])
            if row.email and person.is_mailbox(row.email)
        ]

    async def export(self, account_id: str, person: DataSubject) -> PersonalData:
        lead = next(
            (lead for lead in self._leads.all_of(account_id) if lead.email_key == person.address),
            None,
        )
        messages = [
            SentMessage(m, tuple(await self._events.list(account_id, m.message_id)))
            for m in self._messages_to(account_id, person)
        ]
        return PersonalData(
            person=person,
            lead=lead,
            messages=tuple(messages),
            recipients=tuple(self._recipients_of(account_id, person)),
            import_rows=tuple(self._rows_of(account_id, person)),
            suppression=await self._suppressions.get(account_id, person.digest),
        )

    async def erase(self, account_id: str, person: DataSubject) -> Erased:
        leads = [
            lead for lead in self._leads.all_of(account_id) if lead.email_key == person.address
        ]
        for lead in leads:
            del self._leads._leads[(lead.account_id, lead.lead_id)]
        messages = self._messages_to(account_id, person)
        erased_ids = {m.message_id for m in messages}
        for message in messages:
            self._messages._records[message.message_id] = erased_message(message, person)
        events = 0
        for key, event in self._events._events.items():
            if event.message_id in erased_ids:
                self._events._events[key] = erased_event(event, person)
                events += 1
        recipients = self._recipients_of(account_id, person)
        for recipient in recipients:
            rows = self._recipients._rows[recipient.campaign_id]
            rows[recipient.lead_id] = erased_recipient(recipient, person)
        import_rows = self._rows_of(account_id, person)
        for found in import_rows:
            stored = self._imports._errors[found.import_id]
            stored[stored.index(found.row)] = erased_row(found.row, person)
        return Erased(
            person=person,
            leads=len(leads),
            messages=len(messages),
            events=events,
            campaign_recipients=len(recipients),
            import_errors=len(import_rows),
            suppressions=await self._suppressions.erase(account_id, person.digest),
        )
