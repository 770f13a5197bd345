"""One-click unsubscribe (RFC 8058): the signed token in a message's unsubscribe link, the
link, and the two headers that carry it.

A token names an account and an address (normalised as the suppression list keeps it),
signed with HMAC-SHA256 under the installation's secret key. It is checked without a
database lookup: anyone may present one (no API key, as mail clients POST it), so the
signature is all that makes it the service's own. Shape:
``<base64url(account_id "\\n" address)>.<base64url(mac)>``, no padding.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from dataclasses import dataclass

from leadmail.domain.errors import DomainError, ValidationFailed
from leadmail.domain.suppressions import suppression_address

MIN_KEY_BYTES = 32  # LEADMAIL_SECRET_KEY's least length
# What the signature covers besides the payload: a token is never valid as any other
# signed value of this installation (nor a later version's token as this one's).
_CONTEXT = b"leadmail-unsubscribe:v1:"
_MAC_CHARS = 43  # a SHA-256 digest in unpadded base64url
MAX_TOKEN = 1024  # a longer text is refused before any decoding
PATH_PREFIX = "/u/"
# The template variable the service fills with each recipient's own link (a client never
# supplies it: a value given is ignored).
UNSUBSCRIBE_URL = "unsubscribe_url"
SERVICE_VARIABLES = frozenset({UNSUBSCRIBE_URL})
ONE_CLICK = "List-Unsubscribe=One-Click"  # the POST body (and List-Unsubscribe-Post)


class UnsubscribeTokenInvalid(DomainError):
    """A token not of this installation: tampered with, cut, signed by another key, or
    not a token at all."""

    code = "UNSUBSCRIBE_TOKEN_INVALID"

    def __init__(self) -> None:
        super().__init__("This unsubscribe link is not valid")


@dataclass(frozen=True, slots=True)
class UnsubscribeTarget:
    """Who a token unsubscribes: ``address`` from ``account_id``'s mail."""

    account_id: str
    address: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not text.isascii():
        raise UnsubscribeTokenInvalid()
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as e:
        raise UnsubscribeTokenInvalid() from e


def _mac(key: bytes, payload: str) -> str:
    return _b64(hmac.new(key, _CONTEXT + payload.encode("ascii"), hashlib.sha256).digest())


def check_key(key: bytes) -> bytes:
    """``key`` if it is long enough to sign with (MIN_KEY_BYTES), else ValueError."""
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"the secret key must be at least {MIN_KEY_BYTES} bytes")
    return key


def make_token(key: bytes, account_id: str, address: str) -> str:
    """The token that unsubscribes ``address`` (``Name <addr>`` or ``addr``, normalised
    here) from ``account_id``. ValidationFailed for an address that is not one."""
    if not account_id or "\n" in account_id:
        raise ValueError("an account id is one line of text")
    normal = suppression_address(address)
    payload = _b64(f"{account_id}\n{normal}".encode())
    return f"{payload}.{_mac(key, payload)}"


def read_token(key: bytes, token: str) -> UnsubscribeTarget:
    """What ``token`` names, once its signature under ``key`` is checked (in constant
    time); UnsubscribeTokenInvalid otherwise."""
    if len(token) > MAX_TOKEN or not token.isascii():
        raise UnsubscribeTokenInvalid()
    payload, dot, mac = token.rpartition(".")
    if not dot or not payload or len(mac) != _MAC_CHARS:
        raise UnsubscribeTokenInvalid()
    if not hmac.compare_digest(_mac(key, payload).encode(), mac.encode()):
        raise UnsubscribeTokenInvalid()
    try:
        text = _unb64(payload).decode()
    except UnicodeDecodeError as e:
        raise UnsubscribeTokenInvalid() from e
    account_id, newline, address = text.rpartition("\n")
    if not newline or not account_id:
        raise UnsubscribeTokenInvalid()
    try:
        if suppression_address(address) != address:  # only a token we made has this form
            raise UnsubscribeTokenInvalid()
    except ValidationFailed as e:
        raise UnsubscribeTokenInvalid() from e
    return UnsubscribeTarget(account_id, address)


def unsubscribe_url(public_url: str, token: str) -> str:
    """The page that unsubscribes by ``token``: ``{public_url}/u/{token}``."""
    return f"{public_url.rstrip('/')}{PATH_PREFIX}{token}"


def unsubscribe_headers(url: str) -> tuple[tuple[str, str], ...]:
    """RFC 8058's two headers for ``url``: a mail client POSTs ``List-Unsubscribe=One-Click``
    to it, with no login, when the reader asks to unsubscribe."""
    return (("List-Unsubscribe", f"<{url}>"), ("List-Unsubscribe-Post", ONE_CLICK))
