"""The "console" provider: nothing is delivered; each message is one log event.

For development and demos. The event names the message, never its body nor an address:
the HTML of a real message and the addresses it goes to are personal data (logs are kept
and shipped where the messages table is not), so it logs the body's length, the number
of recipients and the sender's domain. The unsubscribe link's token carries the address
(signed, not hidden: base64), so the headers are logged with the token cut out; at DEBUG
(LEADMAIL_LOG_LEVEL=DEBUG, for a developer following links) a second line gives them whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import structlog

from leadmail.adapters.mail.providers import CONSOLE, CONSOLE_MAX_BATCH
from leadmail.domain.delivery import BatchItem, ItemResult, check_batch
from leadmail.domain.email import OutgoingEmail
from leadmail.ports.mail import EmailProvider

log = structlog.get_logger("leadmail.mail")
HIDDEN = "(hidden: LEADMAIL_LOG_LEVEL=DEBUG shows it)"
# A link's path past /u/ (domain/unsubscribe.PATH_PREFIX): the token.
_TOKEN = re.compile(r"(/u/)[^>\s]+")


class ConsoleEmailProvider(EmailProvider):
    @property
    def name(self) -> str:
        return CONSOLE

    def __repr__(self) -> str:
        return "ConsoleEmailProvider()"

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        # The headers are the service's own (an unsubscribe link), never a client's text.
        extra: dict[str, object] = {}
        if email.headers:
            extra["headers"] = {name: _TOKEN.sub(rf"\1{HIDDEN}", v) for name, v in email.headers}
        if email.text is not None:
            extra["text_length"] = len(email.text)
        log.info(
            "email.console",
            message_id=message_id,
            sender_domain=email.sender.domain,
            recipients=len(email.to),
            subject=email.subject,
            html_length=len(email.html),
            **extra,
        )
        if email.headers:
            log.debug("email.console.headers", message_id=message_id, headers=dict(email.headers))
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
