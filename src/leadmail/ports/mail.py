from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from leadmail.domain.delivery import BatchItem, ItemResult
from leadmail.domain.email import OutgoingEmail


class EmailProvider(Protocol):
    """Hands one message to an email provider, in one attempt (retries are the caller's).

    Returns the provider's id for the message (None if the provider gives none). Raises
    ProviderRejected when the provider refuses it for good (4xx other than 429), and
    ProviderUnavailable when it cannot take it now (connection error, timeout, 429, 5xx),
    with the Retry-After it asked for, if any.
    """

    @property
    def name(self) -> str:
        """The provider's name as configured: resend, postmark, console, ..."""
        ...

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        """``message_id`` is ours; providers that deduplicate (Resend) get it as their
        idempotency key, so a retried attempt is never delivered twice."""
        ...

    @property
    def attempt_timeout(self) -> float | None:
        """Seconds within which every attempt ends, answered or with ProviderUnavailable;
        None when the provider sets no bound of its own (only the caller's deadline)."""
        ...

    @property
    def batch_limit(self) -> int:
        """Messages one request may carry; 1 = no batch endpoint (one message per request)."""
        ...

    @property
    def keeps_idempotency(self) -> bool:
        """A request retried with the same key is never delivered twice (Resend: True),
        batches included."""
        ...

    async def send_batch(self, items: Sequence[BatchItem], *, batch_key: str) -> list[ItemResult]:
        """One attempt, one provider request for all items (1 <= len(items) <= batch_limit,
        each message id once, else ValueError; a batch_limit of 1 means one item per call,
        through the provider's single-message endpoint, keyed by its message id as send()).

        ``batch_key`` is the Idempotency-Key where the provider takes one: the same key for
        a retry of the same batch. Raises ProviderUnavailable / ProviderRejected when the
        request as a whole fails, as send() does; otherwise one ItemResult per item, in
        order: the provider's id, or that message's own refusal (Postmark answers 200 with
        an ErrorCode per message)."""
        ...

    async def close(self) -> None: ...
