"""Every provider request and its messages' outcomes counted for GET /metrics: an
EmailProvider around the configured one (bootstrap wraps it), so each provider adapter
stays as it is and every path that sends is counted in one place."""

from __future__ import annotations

import time
from collections.abc import Sequence

from prometheus_client import Counter, Histogram

from leadmail.domain.delivery import BatchItem, ItemResult, ProviderRejected, ProviderUnavailable
from leadmail.domain.email import OutgoingEmail
from leadmail.ports.mail import EmailProvider

MESSAGES = Counter(
    "leadmail_messages",
    "Messages handed to the provider, by what the provider did with them: accepted,"
    " rejected (for good), unavailable (not now: retried while time is left)",
    ["provider", "outcome"],
)
PROVIDER_SECONDS = Histogram(
    "leadmail_provider_request_duration_seconds",
    "Time of each request to the provider, answered or not",
    ["provider"],
    buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)


class MeteredEmailProvider(EmailProvider):
    def __init__(self, inner: EmailProvider) -> None:
        self._inner = inner
        name = inner.name
        self._seconds = PROVIDER_SECONDS.labels(name)
        self._accepted = MESSAGES.labels(name, "accepted")
        self._rejected = MESSAGES.labels(name, "rejected")
        self._unavailable = MESSAGES.labels(name, "unavailable")

    @property
    def inner(self) -> EmailProvider:
        return self._inner

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def attempt_timeout(self) -> float | None:
        return self._inner.attempt_timeout

    @property
    def batch_limit(self) -> int:
        return self._inner.batch_limit

    @property
    def keeps_idempotency(self) -> bool:
        return self._inner.keeps_idempotency

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        started = time.perf_counter()
        try:
            found = await self._inner.send(email, message_id=message_id)
        except ProviderRejected:
            self._rejected.inc()
            raise
        except ProviderUnavailable:
            self._unavailable.inc()
            raise
        finally:
            self._seconds.observe(time.perf_counter() - started)
        self._accepted.inc()
        return found

    async def send_batch(self, items: Sequence[BatchItem], *, batch_key: str) -> list[ItemResult]:
        started = time.perf_counter()
        try:
            results = await self._inner.send_batch(items, batch_key=batch_key)
        except ProviderRejected:
            self._rejected.inc(len(items))
            raise
        except ProviderUnavailable:
            self._unavailable.inc(len(items))
            raise
        finally:
            self._seconds.observe(time.perf_counter() - started)
        refused = sum(1 for result in results if result.error is not None)
        if refused:
            self._rejected.inc(refused)
        if len(results) > refused:
            self._accepted.inc(len(results) - refused)
        return results

    async def close(self) -> None:
        await self._inner.close()
