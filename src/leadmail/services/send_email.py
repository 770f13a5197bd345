"""Use case: one email, written by the client, to every recipient it names."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from leadmail.services.addressing import Addressing, PlainEmailRequest, checked_key
from leadmail.services.outbox import Outbox
from leadmail.services.results import SendResult


class SendEmail:
    def __init__(self, addressing: Addressing, outbox: Outbox) -> None:
        self._addressing = addressing
        self._outbox = outbox

    def __call__(
        self, account_id: str, request: PlainEmailRequest, idempotency_key: str | None = None
    ) -> Coroutine[Any, Any, SendResult]:
        """One message to every recipient of ``to``. Raises ValidationFailed or
        SenderNotAllowed at once; what it returns raises an idempotency conflict, or
        DeliveryFailed (with every message's outcome) when the provider did not accept it.
        (Not a coroutine of its own: the outbox's is awaited directly, one frame less for
        each of a send's resumptions.)"""
        key = checked_key(idempotency_key)
        plan = self._addressing.plan_plain(request)
        return self._outbox.send(account_id, plan, key)
