"""The "console" provider: nothing is delivered; each message is one log event.

For development and demos. The event names the message, never its body: the HTML of a
real message holds personal data, so only its length is logged.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from leadmail.adapters.mail.providers import CONSOLE, CONSOLE_MAX_BATCH
from leadmail.domain.delivery import BatchItem, ItemResult, check_batch
from leadmail.domain.email import OutgoingEmail
from leadmail.ports.mail import EmailProvider

log = structlog.get_logger("leadmail.mail")


class ConsoleEmailProvider(EmailProvider):
    @property
    def name(self) -> str:
        return CONSOLE

    def __repr__(self) -> str:
        return "ConsoleEmailProvider()"

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        # The headers are the service's own (an unsubscribe link), never a client's text.
        extra: dict[str, object] = {"headers": dict(email.headers)} if email.headers else {}
        if email.text is not None:
            extra["text_length"] = len(email.text)
        log.info(
            "email.console",
            message_id=message_id,
            sender=email.sender.address,
            to=[box.address for box in email.to],
            subject=email.subject,
            html_length=len(email.html),
            **extra,
        )
        return f"console-{message_id}"

    @property
    def attempt_timeout(self) -> float | None:
        return None

    @property
    def batch_limit(self) -> int:
        return CONSOLE_MAX_BATCH

    @property
    def keeps_idempotency(self) -> bool:
        return False

    async def send_batch(self, items: Sequence[BatchItem], *, batch_key: str) -> list[ItemResult]:
        check_batch(items, self.batch_limit)
        [item] = items
        return [
            ItemResult(item.message_id, await self.send(item.email, message_id=item.message_id))
        ]

    async def close(self) -> None:
        return None
