"""The EmailProvider for providers with an HTTP API: one pooled httpx client, one dialect.

One call of ``send`` is one attempt (retries are the service's). Every way an attempt can
end becomes the port's answer: the provider's id, ProviderRejected or ProviderUnavailable.
The API key goes into request headers only; it is kept out of exceptions and reprs, and
the error text a provider sends back is scrubbed of it too.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from urllib.parse import urlsplit, urlunsplit

import httpx
import structlog

from leadmail.adapters.mail.dialects.base import MAX_PROVIDER_TEXT, Dialect, ProviderRequest
from leadmail.domain.delivery import ProviderRejected, ProviderUnavailable, parse_retry_after
from leadmail.domain.email import OutgoingEmail
from leadmail.ports.mail import EmailProvider

log = structlog.get_logger("leadmail.mail")

USER_AGENT = "leadmail"
MAX_CONNECTIONS = 100
KEEPALIVE_EXPIRY_S = 20.0
REDACTED = "[redacted]"


# httpcore's pool re-examines every connection (a readability syscall each) whenever a
# request starts or ends: its cost grows with connections x requests in flight. Spreading
# the connections over a few independent clients divides that work; measured with 50
# concurrent sends, see the README's Performance section.
SHARDS = 8


def pooled_client(timeout: float, max_connections: int = MAX_CONNECTIONS) -> httpx.AsyncClient:
    """A client the provider owns: connections kept open and shared by concurrent sends."""
    return httpx.AsyncClient(
        limits=httpx.Limits(
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=KEEPALIVE_EXPIRY_S,
        ),
        timeout=httpx.Timeout(timeout),
        # A redirect from an email API is a misconfiguration (wrong base URL, a captive
        # proxy); following it would hand the message and the key to another host.
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
    )


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
        # The key, and for a "user:password" key the password on its own.
        self._secrets = tuple(s for s in (api_key, api_key.partition(":")[2]) if s)
        self._timeout = timeout
        self._owns_client = client is None
        self._clients = (
            [pooled_client(timeout, MAX_CONNECTIONS // SHARDS) for _ in range(SHARDS)]
            if client is None
            else [client]
        )
        self._turn = itertools.count()

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

    async def send(self, email: OutgoingEmail, *, message_id: str) -> str | None:
        request = self._dialect.build(email, message_id)
        try:
            async with asyncio.timeout(self._timeout):
                client = self._clients[next(self._turn) % len(self._clients)]
                response = await client.send(self._http_request(client, request))
        except (TimeoutError, httpx.TimeoutException) as e:
            raise ProviderUnavailable(
                f"{self.name} did not answer within {self._timeout:g} s"
            ) from e
        except httpx.RequestError as e:  # refused, reset, dropped, unreadable answer
            raise ProviderUnavailable(
                f"{self.name} could not be reached ({type(e).__name__}: {self._scrub(str(e))})"
            ) from e
        return self._outcome(response)

    async def close(self) -> None:
        if self._owns_client:
            for client in self._clients:
                await client.aclose()

    def _http_request(self, client: httpx.AsyncClient, request: ProviderRequest) -> httpx.Request:
        headers = {**request.headers, **self._auth_headers}
        url = self._base_url + request.path
        timeout = httpx.Timeout(self._timeout)
        if request.json is not None:
            return client.build_request(
                request.method, url, headers=headers, json=request.json, timeout=timeout
            )
        # Form fields as multipart/form-data, the encoding the provider describes; a
        # (None, value) "file" is a plain field: no filename, no content type.
        return client.build_request(
            request.method,
            url,
            headers=headers,
            files=[(name, (None, value.encode())) for name, value in request.form],
            timeout=timeout,
        )

    def _outcome(self, response: httpx.Response) -> str | None:
        status, headers, body = response.status_code, response.headers, response.content
        if 200 <= status < 300:
            provider_id = self._dialect.message_id_from(status, headers, body)
            if provider_id is None:
                # Accepted all the same: the message went out, only its id is unknown.
                log.warning("email.provider_id_missing", provider=self.name, status=status)
            return provider_id
        if 300 <= status < 400:
            where = self._scrub(headers.get("Location", ""))[:200] or "nowhere"
            raise ProviderRejected(
                status, f"{self.name} answered a redirect to {where}, which is not followed"
            )
        text = self._scrub(self._dialect.error_text(status, headers, body))
        text = text or response.reason_phrase or "no error text"
        if self._dialect.retryable(status, body):
            raise ProviderUnavailable(
                f"{self.name} answered {status}: {text}",
                retry_after=parse_retry_after(headers.get("Retry-After")),
            )
        raise ProviderRejected(status, text[:MAX_PROVIDER_TEXT])

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text
