"""Use case: each account's suppression list, as a client reads and edits it, and as the
service adds to it (unsubscribe links, provider webhooks)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_listing import MAX_PAGE_SIZE
from leadmail.domain.suppressions import (
    CLIENT_REASONS,
    Added,
    Suppression,
    SuppressionNotFound,
    SuppressionReason,
    address_digest,
    decode_cursor,
    encode_cursor,
    suppression_address,
)
from leadmail.ports.suppressions import SuppressionRepository

CLIENT_ONLY_MANUAL = (
    "must be `manual`: `unsubscribed`, `bounced` and `complained` entries are added by the"
    " service itself (unsubscribe links, provider webhooks)"
)


@dataclass(frozen=True, slots=True)
class SuppressionPage:
    items: list[Suppression]
    next_cursor: str | None


class SuppressionList:
    def __init__(self, suppressions: SuppressionRepository, clock: Clock = utc_now) -> None:
        self._suppressions = suppressions
        self._clock = clock

    async def list(
        self,
        account_id: str,
        limit: int,
        cursor: str | None = None,
        reason: SuppressionReason | None = None,
    ) -> SuppressionPage:
        """Newest first, a page at a time; ValidationFailed for a limit outside 1-100 or a
        cursor this service did not issue."""
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise ValidationFailed.one("limit", f"must be between 1 and {MAX_PAGE_SIZE}")
        after = None if cursor is None else decode_cursor(cursor)
        found = await self._suppressions.list(account_id, limit, after, reason)
        if len(found) <= limit:
            return SuppressionPage(found, None)
        return SuppressionPage(found[:limit], encode_cursor(found[limit - 1]))

    async def add(
        self, account_id: str, email: str, reason: SuppressionReason = SuppressionReason.MANUAL
    ) -> Added:
        """A client's entry: only ``manual`` (ValidationFailed naming ``reason`` else).
        ``written`` is False when the address was on the list already (the entry as it
        stands: a manual entry replaces none)."""
        if reason not in CLIENT_REASONS:
            raise ValidationFailed.one("reason", CLIENT_ONLY_MANUAL)
        address = suppression_address(email)
        entry = Suppression.of(account_id, address, reason, self._clock())
        return await self._suppressions.add(entry)

    async def record(
        self,
        account_id: str,
        address: str,
        reason: SuppressionReason,
        *,
        now: datetime | None = None,
        message_id: str | None = None,
        campaign_id: str | None = None,
    ) -> Suppression:
        """The service's own entry (any reason) for ``address`` (as sent: normalised here),
        kept as the list's rule says (one per address, a stronger reason replacing a weaker
        one). Returns the entry now stored."""
        entry = Suppression.of(
            account_id,
            suppression_address(address),
            reason,
            now if now is not None else self._clock(),
            message_id=message_id,
            campaign_id=campaign_id,
        )
        return (await self._suppressions.add(entry)).entry

    async def remove(self, account_id: str, email: str) -> None:
        """Take ``email`` off the list; SuppressionNotFound when it is not on it (an
        address that could not be on it, being none, included)."""
        try:
            digest = address_digest(suppression_address(email))
        except ValidationFailed as e:
            raise SuppressionNotFound(email) from e
        if not await self._suppressions.remove(account_id, digest):
            raise SuppressionNotFound(email)
