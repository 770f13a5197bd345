"""Use case: one email, written by the client, to every recipient it names."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Coroutine
from typing import Any

from leadmail.domain.html_parts import text_of
from leadmail.services.addressing import Addressing, PlainEmailRequest, SendPlan, checked_key
from leadmail.services.outbox import Outbox
from leadmail.services.results import SendResult
from leadmail.services.unsubscribes import Unsubscribes

# HTML up to this many characters has its text part derived on the event loop (about
# 0.3 ms a KB: 1.2 ms here); longer HTML in a worker thread, so that one large body does
# not hold up every other request the process is serving (150 ms for 512 KB).
DERIVE_ON_LOOP = 4096


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
        if request.text is None:  # a text part derived from the HTML
            [email] = plan.emails
            if len(email.html) > DERIVE_ON_LOOP:
                return self._with_derived_text(account_id, plan, key)
            plan = _with_text(plan, text_of(email.html))
        return self._sent(account_id, plan, key)

    def _sent(
        self, account_id: str, plan: SendPlan, key: str | None
    ) -> Coroutine[Any, Any, SendResult]:
        if plan.list_unsubscribe:
            return self._with_link(account_id, plan, key)
        return self._outbox.send(account_id, plan, key)

    async def _with_derived_text(
        self, account_id: str, plan: SendPlan, key: str | None
    ) -> SendResult:
        [email] = plan.emails
        text = await asyncio.to_thread(text_of, email.html)
        return await self._sent(account_id, _with_text(plan, text), key)

    async def _with_link(self, account_id: str, plan: SendPlan, key: str | None) -> SendResult:
        """``plan``'s one message with its recipient's RFC 8058 headers."""
        links = self._links
        await links.ready()
        [email] = plan.emails
        headers = links.headers(account_id, email.to[0].address)
        linked = dataclasses.replace(plan, emails=(dataclasses.replace(email, headers=headers),))
        return await self._outbox.send(account_id, linked, key)


def _with_text(plan: SendPlan, text: str) -> SendPlan:
    """``plan``'s one message with ``text`` as its plain-text part (none when empty: an
    HTML of nothing but images, say)."""
    [email] = plan.emails
    return dataclasses.replace(plan, emails=(dataclasses.replace(email, text=text or None),))
