"""The EmailProvider implementations the mail contract suite runs against, each with a way
to script what its provider answers next.

Every HTTP provider in the registry, built by the factory as the app builds it and aimed at
the stand-in (tests/support/standin.py); the console provider; the memory adapters'
RecordingEmailProvider. Which scripted answers an implementation can give decides which
cases it runs: the console accepts everything, and only a provider over the wire can be
cut off, kept waiting or find nobody listening.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Sequence

from leadmail.adapters.mail.factory import email_provider_from
from leadmail.adapters.mail.providers import CONSOLE, DIALECTS, is_provider_name
from leadmail.adapters.memory.mail import RecordingEmailProvider
from leadmail.config import Settings
from leadmail.domain.delivery import ProviderRejected, ProviderUnavailable
from leadmail.ports.mail import EmailProvider
from tests.support.mail import DOMAIN, SHORT_TIMEOUT, TIMEOUT, key_for
from tests.support.standin import ProviderStandin

RECORDING = "recording"
HTTP: tuple[str, ...] = tuple(DIALECTS)
EVERY: tuple[str, ...] = (*HTTP, CONSOLE, RECORDING)
SCRIPTED: tuple[str, ...] = (*HTTP, RECORDING)  # can be told to refuse, or to be unavailable
IDEMPOTENT: tuple[str, ...] = tuple(n for n, d in DIALECTS.items() if d.idempotency_header)
# The recording provider as a provider with a batch endpoint that keeps idempotency keys.
RECORDING_BATCHES = "recording-batches"
BATCH_EVERY: tuple[str, ...] = (*EVERY, RECORDING_BATCHES)
BATCHING: tuple[str, ...] = (
    *(n for n, d in DIALECTS.items() if d.max_batch > 1),
    RECORDING_BATCHES,
)
ONE_PER_REQUEST: tuple[str, ...] = tuple(n for n in BATCH_EVERY if n not in BATCHING)
KEEPS_KEYS: tuple[str, ...] = (*(n for n in IDEMPOTENT if n in BATCHING), RECORDING_BATCHES)

# How a provider can be unavailable, and the retry_after the error must then carry.
UNAVAILABLE: dict[str, float | None] = {
    "500": None,
    "503": None,
    "429": None,
    "429, Retry-After: 7": 7.0,
    "503, Retry-After: 2": 2.0,
    "connection cut": None,
    "no answer in time": None,
    "nobody listening": None,
}
OVER_THE_WIRE = ("connection cut", "no answer in time", "nobody listening")


def unavailable_cases() -> list[tuple[str, str]]:
    """(implementation, how) for every way each implementation can be unavailable."""
    return [
        (kind, how) for how in UNAVAILABLE for kind in (HTTP if how in OVER_THE_WIRE else SCRIPTED)
    ]


def _status_and_retry_after(how: str) -> tuple[int, str | None]:
    status, _, retry_after = how.partition(", Retry-After: ")
    return int(status), retry_after or None


class Harness:
    """One implementation of the port under test, and the provider behind it."""

    def __init__(self, kind: str, name: str, provider: EmailProvider) -> None:
        self.kind = kind
        self.name = name  # the name it was configured with
        self.provider = provider
        self._open: list[EmailProvider] = [provider]  # closed at teardown, if not before

    def issued_id(self, message_id: str) -> str | None:
        """The id the provider side gave the last message it accepted."""
        raise NotImplementedError

    def refuse_next(self, status: int, text: str) -> None:
        raise NotImplementedError(f"{self.kind} cannot be told to refuse")

    def unavailable_next(self, how: str) -> None:
        raise NotImplementedError(f"{self.kind} cannot be made unavailable")

    def idempotency_keys(self) -> list[str | None]:
        raise NotImplementedError(f"{self.kind} has no idempotency key")

    def issued_ids(self, message_ids: Sequence[str]) -> list[str]:
        """The ids the provider side gave those of ``message_ids`` it accepted in the last
        request, in their order."""
        raise NotImplementedError(f"{self.kind} issues no ids of its own")

    def deliveries(self) -> int:
        """Messages the provider side took for delivery, each once (a replayed answer to an
        idempotency key seen before delivers nothing)."""
        raise NotImplementedError(f"{self.kind} does not count deliveries")

    def refuse_recipient(self, address: str, text: str) -> None:
        """A message of a batch to ``address`` is refused, as the provider refuses one."""
        raise NotImplementedError(f"{self.kind} cannot refuse one message of a batch")

    def lose_answer_next(self) -> None:
        """The next request is taken, but its answer never reaches the provider under test."""
        raise NotImplementedError(f"{self.kind} cannot lose an answer")

    async def close(self) -> None:
        """The provider under test's close(), called once."""
        self._open.remove(self.provider)
        await self.provider.close()

    async def released(self) -> bool:
        """After close(): whatever the provider held (connections) is given back."""
        return True

    async def teardown(self) -> None:
        for provider in self._open:
            await provider.close()


class ConsoleHarness(Harness):
    def __init__(self) -> None:
        super().__init__(CONSOLE, CONSOLE, email_provider_from(Settings()))

    def issued_id(self, message_id: str) -> str | None:
        return f"console-{message_id}"  # its documented id (README, Email providers)


class RecordingHarness(Harness):
    def __init__(self, *, batches: bool = False) -> None:
        self.recording = RecordingEmailProvider(
            "recording-contract", batch_limit=100 if batches else 1, keeps_idempotency=batches
        )
        kind = RECORDING_BATCHES if batches else RECORDING
        super().__init__(kind, "recording-contract", self.recording)

    def issued_id(self, message_id: str) -> str | None:
        last = self.recording.delivered[-1]
        assert last.message_id == message_id
        return last.provider_id

    def refuse_next(self, status: int, text: str) -> None:
        self.recording.fail_next(ProviderRejected(status, text))

    def unavailable_next(self, how: str) -> None:
        status, retry_after = _status_and_retry_after(how)
        after = float(retry_after) if retry_after is not None else None
        self.recording.fail_next(ProviderUnavailable(f"answered {status}", retry_after=after))

    def issued_ids(self, message_ids: Sequence[str]) -> list[str]:
        issued = {d.message_id: d.provider_id for d in self.recording.delivered}
        return [issued[m] for m in message_ids if m in issued]

    def deliveries(self) -> int:
        return len(self.recording.delivered)

    def refuse_recipient(self, address: str, text: str) -> None:
        self.recording.fail_for(address, ProviderRejected(422, text))


class HttpHarness(Harness):
    """The HTTP provider with one dialect, against a stand-in that checks its key."""

    def __init__(self, kind: str, standin: ProviderStandin) -> None:
        super().__init__(kind, kind, self._build(kind, standin.url, TIMEOUT))
        self.standin = standin

    @staticmethod
    def _build(kind: str, base_url: str, timeout: float) -> EmailProvider:
        assert is_provider_name(kind)
        settings = Settings(
            email_provider=kind,
            email_api_key=key_for(kind),
            email_domain=DOMAIN,
            email_base_url=base_url,
            email_timeout=timeout,
        )
        return email_provider_from(settings)

    def _replace_provider(self, base_url: str, timeout: float) -> None:
        self.provider = self._build(self.kind, base_url, timeout)
        self._open.append(self.provider)

    def issued_id(self, message_id: str) -> str | None:
        last = self.standin.requests[-1]
        assert last.answer in ("200", "202")
        return last.provider_id

    def accept_without_an_id_next(self) -> None:
        self.standin.answer_next(1, status=202 if self.kind == "sendgrid" else 200, body=b"OK")

    def refuse_next(self, status: int, text: str) -> None:
        self.standin.fail_next(1, status=status, message=text)

    def unavailable_next(self, how: str) -> None:
        if how == "connection cut":
            self.standin.drop_next(1)
        elif how == "no answer in time":
            self.standin.hang_next(1)
            self._replace_provider(self.standin.url, SHORT_TIMEOUT)
        elif how == "nobody listening":
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            self._replace_provider(f"http://127.0.0.1:{port}", TIMEOUT)
        else:
            status, retry_after = _status_and_retry_after(how)
            self.standin.fail_next(1, status=status, retry_after=retry_after)

    def idempotency_keys(self) -> list[str | None]:
        header = DIALECTS[self.kind].idempotency_header
        return [request.header(header) for request in self.standin.requests]

    def issued_ids(self, message_ids: Sequence[str]) -> list[str]:
        last = self.standin.requests[-1]
        return list(last.provider_ids) if last.is_batch else [last.provider_id or ""]

    def deliveries(self) -> int:
        return self.standin.delivered_count

    def refuse_recipient(self, address: str, text: str) -> None:
        self.standin.refuse_recipient(address, text)

    def lose_answer_next(self) -> None:
        self.standin.lose_answer_next(1)

    async def released(self) -> bool:
        deadline = time.monotonic() + 5
        while self.standin.connections_open and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return self.standin.connections_open == 0
