"""What a send returns, and how it fails: every message's outcome either way."""

from __future__ import annotations

from dataclasses import dataclass, field

from leadmail.domain.delivery import DeliveryError, ProviderUnavailable
from leadmail.domain.email import Message
from leadmail.domain.errors import LeadmailError


@dataclass(slots=True)  # not frozen: made on every send (see leadmail/services/__init__.py)
class SendResult:
    """Every message the request made, in recipient order. ``errors`` holds, for each
    message that failed this time, why."""

    messages: list[Message]
    errors: dict[str, DeliveryError] = field(default_factory=dict)
    replayed: bool = False
    per_recipient: bool = False  # a template send: one message per recipient

    @property
    def failure(self) -> DeliveryFailed | None:
        if not self.errors:
            return None
        errors = list(self.errors.values())
        unavailable = next((e for e in errors if isinstance(e, ProviderUnavailable)), None)
        if unavailable is not None:
            return DeliveryUnavailable(self, unavailable)
        return DeliveryRejected(self, errors[0])

    def checked(self) -> SendResult:
        """This result, or its failure raised."""
        failure = self.failure
        if failure is not None:
            raise failure
        return self


class DeliveryFailed(LeadmailError):
    """At least one message was not accepted by the provider. ``result`` has them all."""

    code = "DELIVERY_FAILED"

    def __init__(self, result: SendResult, cause: DeliveryError) -> None:
        failed = len(result.errors)
        total = len(result.messages)
        prefix = "" if total == 1 else f"{failed} of {total} messages failed. "
        super().__init__(prefix + cause.message)
        self.result = result


class DeliveryRejected(DeliveryFailed):
    """The provider refused (4xx): fix the request; retrying as is will not help."""

    code = "PROVIDER_REJECTED"


class DeliveryUnavailable(DeliveryFailed):
    """The provider could not be reached in time: safe to retry with the same
    Idempotency-Key, which sends only what was not sent."""

    code = "PROVIDER_UNAVAILABLE"
    DEFAULT_RETRY_AFTER = 5.0  # seconds, when no provider said how long to wait

    @property
    def retry_after(self) -> float:
        """How long the caller should wait: the longest any provider asked for."""
        asked = [
            e.retry_after
            for e in self.result.errors.values()
            if isinstance(e, ProviderUnavailable) and e.retry_after
        ]
        return max(asked, default=self.DEFAULT_RETRY_AFTER)
