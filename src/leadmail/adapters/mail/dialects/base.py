"""What every provider's dialect shares: the request it builds, the defaults, and the
readers of a provider's answer."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import msgspec

from leadmail.domain.delivery import BatchItem
from leadmail.domain.email import OutgoingEmail

# The provider's own error text is cut to this. It is not MAX_LAST_ERROR (domain/email.py),
# the longer limit of a message's stored last_error, which holds our sentence around it.
MAX_PROVIDER_TEXT = 500

JsonObject = dict[str, Any]


@dataclass(slots=True)  # not frozen: made on every send, as the services' records
class ProviderRequest:
    """One HTTP request, less the base URL and the auth headers (HttpEmailProvider adds both).

    The body is ``json`` (an object), ``json_array`` (a batch: an array of objects) or
    ``form``: form fields in order, a name may repeat; the HTTP provider encodes them as
    multipart/form-data."""

    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    json: JsonObject | None = None
    form: tuple[tuple[str, str], ...] = ()
    json_array: list[JsonObject] | None = None


@dataclass(frozen=True, slots=True)
class ItemAnswer:
    """What a batch answer says of one message: the provider's id, or its refusal of that
    message alone (``refused`` the HTTP status the same refusal has on the single-message
    endpoint, ``error`` the provider's words)."""

    provider_id: str | None = None
    refused: int = 0
    error: str = ""


class Dialect:
    """The defaults every provider shares; each provider overrides what differs."""

    name: ClassVar[str]  # as LEADMAIL_EMAIL_PROVIDER names it
    default_base_url: ClassVar[str]  # the public API, used when no base URL is configured
    needs_api_key: ClassVar[bool] = True  # LEADMAIL_EMAIL_API_KEY is required
    needs_domain: ClassVar[bool] = False  # LEADMAIL_EMAIL_DOMAIN is required
    # An http:// base URL is taken without LEADMAIL_EMAIL_ALLOW_INSECURE: only for a local
    # tool that serves plain HTTP by default and delivers nowhere (Mailpit). A provider
    # that delivers mail is reached over TLS: its key and the messages travel in clear
    # otherwise.
    plain_http: ClassVar[bool] = False
    # The header that carries our message id as the provider's idempotency key, so a
    # retried attempt is not delivered twice; "" when the provider has no such key.
    idempotency_header: ClassVar[str] = ""
    # Messages one request may carry: > 1 where the provider has a batch endpoint that
    # takes an array of complete messages (then build_batch and batch_answers apply).
    max_batch: ClassVar[int] = 1
    # Requests per second the provider allows by default (LEADMAIL_EMAIL_RATE's default);
    # 0 = no published limit.
    default_rate: ClassVar[float] = 0.0

    @classmethod
    def configured(cls, *, domain: str = "") -> Self:
        """The dialect for these settings; ``domain`` matters only where needs_domain."""
        return cls()

    def build(self, email: OutgoingEmail, message_id: str) -> ProviderRequest:
        raise NotImplementedError

    def build_batch(self, items: Sequence[BatchItem], batch_key: str) -> ProviderRequest:
        """One request for every item, where max_batch > 1; ``batch_key`` is the request's
        idempotency key where the provider takes one."""
        raise NotImplementedError(f"{self.name} has no batch endpoint")

    def batch_answers(
        self, status: int, headers: Mapping[str, str], body: bytes, count: int
    ) -> list[ItemAnswer]:
        """What an accepted (2xx) batch answer says of each of the ``count`` messages, in
        order. An answer that cannot be read says "accepted, id unknown" of each message
        it does not account for, as message_id_from does of a single message."""
        raise NotImplementedError(f"{self.name} has no batch endpoint")

    def auth_headers(self, api_key: str) -> dict[str, str]:
        """Bearer auth; providers with another scheme override this."""
        return {"Authorization": f"Bearer {api_key}"}

    def message_id_from(self, status: int, headers: Mapping[str, str], body: bytes) -> str | None:
        """The provider's id for an accepted message, None if the answer carries none."""
        value = json_object(body).get("id")
        return value if isinstance(value, str) and value else None

    def error_text(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        """The provider's own words for a failed request, at most MAX_PROVIDER_TEXT long."""
        return plain_text(body)

    def retryable(self, status: int, body: bytes) -> bool:
        """Whether a non-2xx answer means "not now" rather than "never" (see the port)."""
        return status == 429 or status >= 500


def basic_auth(user: str, password: str) -> str:
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


def header(headers: Mapping[str, str], name: str) -> str:
    # httpx.Headers ignores case; a plain dict (in tests) may not.
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), "")


def json_object(body: bytes) -> JsonObject:
    """The body as a JSON object, or {} if it is anything else."""
    data = _json(body)
    return data if isinstance(data, dict) else {}


def json_array(body: bytes) -> list[Any]:
    """The body as a JSON array, or [] if it is anything else."""
    data = _json(body)
    return data if isinstance(data, list) else []


def _json(body: bytes) -> Any:
    try:
        return msgspec.json.decode(body)
    except ValueError:  # not JSON, or not UTF-8 (msgspec.DecodeError is a ValueError)
        return None


def padded(answers: list[ItemAnswer], count: int) -> list[ItemAnswer]:
    """``count`` answers: those read, then "accepted, id unknown" for any not accounted for
    (an answer with more entries than messages is cut to them)."""
    return [*answers[:count], *[ItemAnswer()] * (count - len(answers))]


def plain_text(body: bytes) -> str:
    return clip(body.decode("utf-8", errors="replace"))


def clip(text: str) -> str:
    """One line, at most MAX_PROVIDER_TEXT characters."""
    flat = " ".join(text.split())
    if len(flat) <= MAX_PROVIDER_TEXT:
        return flat
    return flat[: MAX_PROVIDER_TEXT - 1] + "…"
