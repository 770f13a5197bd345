"""Use case: one email, written by the client, to every recipient it names."""

from __future__ import annotations

from leadmail.services.addressing import Addressing, PlainEmailRequest, checked_key
from leadmail.services.outbox import Outbox
from leadmail.services.results import SendResult


class SendEmail:
    def __init__(self, addressing: Addressing, outbox: Outbox) -> None:
        self._addressing = addressing
        self._outbox = outbox

    async def __call__(
        self, account_id: str, request: PlainEmailRequest, idempotency_key: str | None = None
    ) -> SendResult:
        """One message to every recipient of ``to``. Raises ValidationFailed,
        SenderNotAllowed, an idempotency conflict, or DeliveryFailed (with every message's
        outcome) when the provider did not accept it."""
        key = checked_key(idempotency_key)
        plan = self._addressing.plan_plain(request)
        return (await self._outbox.send(account_id, plan, key)).checked()
