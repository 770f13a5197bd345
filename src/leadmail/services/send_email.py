"""Use case: one email, written by the client, to every recipient it names."""

from __future__ import annotations

import dataclasses
from collections.abc import Coroutine
from typing import Any

from leadmail.services.addressing import Addressing, PlainEmailRequest, SendPlan, checked_key
from leadmail.services.outbox import Outbox
from leadmail.services.results import SendResult
from leadmail.services.unsubscribes import Unsubscribes


class SendEmail:
    def __init__(self, addressing: Addressing, outbox: Outbox, links: Unsubscribes) -> None:
        self._addressing = addressing
        self._outbox = outbox
        self._links = links

    def __call__(
        self, account_id: str, request: PlainEmailRequest, idempotency_key: str | None = None
    ) -> Coroutine[Any, Any, SendResult]:
        """One message to every recipient of ``to``. Raises ValidationFailed or
        SenderNotAllowed at once (``list_unsubscribe`` with more than one recipient
        included: the message's link names its one recipient); what it returns raises an
        idempotency conflict, or DeliveryFailed (with every message's outcome) when the
        provider did not accept it. (Not a coroutine of its own: the outbox's is awaited
        directly, one frame less for each of a send's resumptions.)"""
        key = checked_key(idempotency_key)
        plan = self._addressing.plan_plain(request)
        if plan.list_unsubscribe:
            return self._with_link(account_id, plan, key)
        return self._outbox.send(account_id, plan, key)

    async def _with_link(self, account_id: str, plan: SendPlan, key: str | None) -> SendResult:
        """``plan``'s one message with its recipient's RFC 8058 headers."""
        links = self._links
        await links.ready()
        [email] = plan.emails
        headers = links.headers(account_id, email.to[0].address)
        linked = dataclasses.replace(plan, emails=(dataclasses.replace(email, headers=headers),))
        return await self._outbox.send(account_id, linked, key)
