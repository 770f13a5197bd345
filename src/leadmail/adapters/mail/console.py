"""The "console" provider: nothing is delivered; each message is one log event.

For development and demos. The event names the message, never its body: the HTML of a
real message holds personal data, so only its length is logged.
"""

from __future__ import annotations

import structlog

from leadmail.domain.email import OutgoingEmail
from leadmail.ports.mail import EmailProvider

log = structlog.get_logger("leadmail.mail")


class ConsoleEmailProvider(EmailProvider):
    @property
    def name(self) -> str:
        return "console"

    def __repr__(self) -> str:
        return "ConsoleEmailProvider()"

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        log.info(
            "email.console",
            message_id=message_id,
            sender=email.sender.address,
            to=[box.address for box in email.to],
            subject=email.subject,
            html_length=len(email.html),
        )
        return f"console-{message_id}"

    async def close(self) -> None:
        return None
