"""The EmailProvider for providers with an HTTP API: one pooled httpx client, one dialect.

One call of ``send`` or ``send_batch`` is one attempt (retries are the caller's). Every way
an attempt can end becomes the port's answer: the provider's id (per message of a batch:
its id or its own refusal), ProviderRejected or ProviderUnavailable.
The API key goes into request headers only; it is kept out of exceptions and reprs, and
the error text a provider sends back is scrubbed of it too (redaction.py). An answer is
read up to MAX_ANSWER_BYTES: a provider's is a few hundred bytes, and one that goes on
past that is not read into memory whole.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec
import structlog

from leadmail.adapters.mail.connections import FreeConnections, connections_to
from leadmail.adapters.mail.dialects.base import MAX_PROVIDER_TEXT, Dialect, ProviderRequest
from leadmail.adapters.mail.redaction import scrub, secret_forms
from leadmail.domain.delivery import (
    BatchItem,
    ItemResult,
    ProviderRejected,
    ProviderUnavailable,
    check_batch,
    parse_retry_after,
)
from leadmail.domain.email import OutgoingEmail
from leadmail.ports.mail import EmailProvider

log = structlog.get_logger("leadmail.mail")

USER_AGENT = "leadmail"
MAX_CONNECTIONS = 100  # services.outgoing.DEFAULT_CONCURRENCY follows it
MAX_ANSWER_BYTES = 1_048_576  # 1 MiB of a provider's answer, decoded, at most
MAX_URLS = 64  # parsed URLs kept (one per path a dialect uses)
T = TypeVar("T")


def _as_is(response: httpx.Response, body: bytes) -> tuple[httpx.Response, bytes]:
    return response, body


async def _read_capped(response: httpx.Response) -> bytes | None:
    """The answer's body, or None once it is past MAX_ANSWER_BYTES (not read further)."""
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > MAX_ANSWER_BYTES:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


class HttpEmailProvider(EmailProvider):
    def __init__(
        self,
        dialect: Dialect,
        *,
        api_key: str,
        base_url: str = "",
        timeout: float = 10.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        """``base_url`` empty means the provider's public API; ``timeout`` bounds each
        attempt as a whole (connecting, sending and reading the answer). A ``client``
        given is shared and left open by ``close()``."""
        if not (0 < timeout < math.inf):
            raise ValueError("the timeout must be a positive number of seconds")
        if dialect.needs_api_key and not api_key:
            raise ValueError(f"the {dialect.name} provider needs an API key")
        base = (base_url or dialect.default_base_url).rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ValueError("the base URL must start with http:// or https://")
        self._dialect = dialect
        self._base_url = base
        self._auth_headers = dialect.auth_headers(api_key)
        self._secrets = secret_forms(api_key, self._auth_headers)
        self._timeout = timeout
        self._client = client  # shared, when given: requests go through it
        self._connections = FreeConnections(
            connections_to(base, MAX_CONNECTIONS) if client is None else []
        )
        self._request_timeout = httpx.Timeout(timeout).as_dict()
        self._headers = {"User-Agent": USER_AGENT, **self._auth_headers}
        # Each path's URL parsed once: httpx parses a URL given as text on every request
        # (about half the cost of building one). A dialect has a path or two.
        self._urls: dict[str, httpx.URL] = {}

    def __repr__(self) -> str:
        # A base URL may carry credentials (https://user:password@host): never shown.
        parts = urlsplit(self._base_url)
        host = parts.netloc.rpartition("@")[2]
        shown = urlunsplit(parts._replace(netloc=host))
        return f"HttpEmailProvider(name={self.name!r}, base_url={shown!r})"

    @property
    def name(self) -> str:
        return self._dialect.name

    @property
    def base_url(self) -> str:
        return self._base_url

    @property
    def timeout(self) -> float:
        return self._timeout

    @property
    def attempt_timeout(self) -> float:
        return self._timeout

    @property
    def batch_limit(self) -> int:
        return self._dialect.max_batch

    @property
    def keeps_idempotency(self) -> bool:
        return bool(self._dialect.idempotency_header)

    def send(self, email: OutgoingEmail, *, message_id: str) -> Coroutine[Any, Any, str | None]:
        # The attempt's coroutine itself, its answer read by _outcome: no frame of its own
        # around it (one less for each of the attempt's resumptions).
        return self._attempt(self._dialect.build(email, message_id), self._outcome)

    async def send_batch(self, items: Sequence[BatchItem], *, batch_key: str) -> list[ItemResult]:
        check_batch(items, self.batch_limit)
        if self.batch_limit == 1:  # no batch endpoint: the one message, sent as send() does
            [item] = items
            return [
                ItemResult(item.message_id, await self.send(item.email, message_id=item.message_id))
            ]
        response, body = await self._attempt(self._dialect.build_batch(items, batch_key), _as_is)
        status = response.status_code
        if not 200 <= status < 300:
            raise self._failure(response, body)
        # Scrubbed before the dialect clips each message's refusal.
        answers = self._dialect.batch_answers(
            status, response.headers, self._scrubbed(body), len(items)
        )
        results = [
            ItemResult(item.message_id, answer.provider_id)
            if not answer.refused
            else ItemResult(
                item.message_id, None, ProviderRejected(answer.refused, self._scrub(answer.error))
            )
            for item, answer in zip(items, answers, strict=True)
        ]
        if any(r.provider_message_id is None and r.error is None for r in results):
            # Accepted all the same (as in _outcome): only some ids are unknown.
            log.warning("email.provider_id_missing", provider=self.name, status=status)
        return results

    async def _attempt(
        self, provider_request: ProviderRequest, read: Callable[[httpx.Response, bytes], T]
    ) -> T:
        """One request, its answer read (up to MAX_ANSWER_BYTES) and handed to ``read``
        with its body; ProviderUnavailable when none came, the answer's failure when it
        was too long."""
        request = self._http_request(provider_request)
        try:
            async with asyncio.timeout(self._timeout):
                if self._client is not None:
                    response = await self._client.send(request, stream=True)
                    try:
                        body = await _read_capped(response)
                    finally:
                        await response.aclose()
                else:  # on a free connection, its answer read (inline: one frame less for
                    # each of the attempt's resumptions). The transport follows no
                    # redirect: a 3xx comes back as an answer (see _outcome). Closed before
                    # its end, the connection is dropped, not reused.
                    transport = await self._connections.take()
                    try:
                        response = await transport.handle_async_request(request)
                        try:
                            body = await _read_capped(response)
                        finally:
                            await response.aclose()
                    finally:
                        self._connections.give(transport)
        except (TimeoutError, httpx.TimeoutException) as e:
            raise ProviderUnavailable(
                f"{self.name} did not answer within {self._timeout:g} s"
            ) from e
        except httpx.RequestError as e:  # refused, reset, dropped, unreadable answer
            raise ProviderUnavailable(
                f"{self.name} could not be reached ({type(e).__name__}: {self._scrub(str(e))})"
            ) from e
        if body is None:
            raise self._too_long(response)
        return read(response, body)

    async def close(self) -> None:
        for transport in self._connections.transports:
            await transport.aclose()

    def _url(self, path: str) -> httpx.URL:
        url = self._urls.get(path)
        if url is None:
            if len(self._urls) >= MAX_URLS:
                self._urls.clear()
            url = self._urls[path] = httpx.URL(self._base_url + path)
        return url

    def _http_request(self, request: ProviderRequest) -> httpx.Request:
        url = self._url(request.path)
        headers = {**request.headers, **self._headers}
        extensions = {"timeout": self._request_timeout}
        payload = request.json if request.json is not None else request.json_array
        if payload is not None:
            return httpx.Request(
                request.method,
                url,
                headers={**headers, "Content-Type": "application/json"},
                content=msgspec.json.encode(payload),  # compact UTF-8, as httpx's json=
                extensions=extensions,
            )
        # Form fields as multipart/form-data, the encoding the provider describes; a
        # (None, value) "file" is a plain field: no filename, no content type.
        return httpx.Request(
            request.method,
            url,
            headers=headers,
            files=[(name, (None, value.encode())) for name, value in request.form],
            extensions=extensions,
        )

    def _outcome(self, response: httpx.Response, body: bytes) -> str | None:
        status, headers = response.status_code, response.headers
        if 200 <= status < 300:
            provider_id = self._dialect.message_id_from(status, headers, body)
            if provider_id is None:
                # Accepted all the same: the message went out, only its id is unknown.
                log.warning("email.provider_id_missing", provider=self.name, status=status)
            return provider_id
        raise self._failure(response, body)

    def _failure(
        self, response: httpx.Response, body: bytes
    ) -> ProviderRejected | ProviderUnavailable:
        """What a non-2xx answer means: refused for good, or not now."""
        status, headers = response.status_code, response.headers
        if 300 <= status < 400:
            where = self._scrub(headers.get("Location", ""))[:200] or "nowhere"
            return ProviderRejected(
                status, f"{self.name} answered a redirect to {where}, which is not followed"
            )
        # Scrubbed before the dialect clips it (a key cut at the limit would be missed),
        # and after: what the dialect decoded (JSON escapes) is checked again.
        text = self._scrub(self._dialect.error_text(status, headers, self._scrubbed(body)))
        text = text or response.reason_phrase or "no error text"
        if self._dialect.retryable(status, body):
            return ProviderUnavailable(
                f"{self.name} answered {status}: {text}",
                retry_after=parse_retry_after(headers.get("Retry-After")),
                status=status,
            )
        return ProviderRejected(status, text[:MAX_PROVIDER_TEXT])

    def _too_long(self, response: httpx.Response) -> ProviderRejected | ProviderUnavailable:
        """An answer longer than MAX_ANSWER_BYTES, unread: a provider's answer to a send is
        a few hundred bytes, so a 2xx this long is not the provider's (a wrong base URL,
        say) and is refused, not retried (the same URL would answer the same); another
        status means what it always does."""
        status = response.status_code
        text = (
            f"{self.name} answered {status} with more than"
            f" {MAX_ANSWER_BYTES // 1_048_576} MiB; the answer was not read"
        )
        if status >= 300 and self._dialect.retryable(status, b""):
            return ProviderUnavailable(
                text,
                retry_after=parse_retry_after(response.headers.get("Retry-After")),
                status=status,
            )
        return ProviderRejected(status, text)

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets)

    def _scrubbed(self, body: bytes) -> bytes:
        """The answer's body with the key's forms taken out (it is decoded for that; a
        body that holds none is handed on as it came)."""
        text = body.decode("utf-8", errors="replace")
        clean = self._scrub(text)
        return body if clean == text else clean.encode()
