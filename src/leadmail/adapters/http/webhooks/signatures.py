"""Each provider's way of proving a webhook came from it, checked on the raw request before
anything else reads the body, every comparison in constant time. A signature whose own
timestamp is more than TOLERANCE from now is refused: a replay of a request seen by
someone else.

- Resend signs the Svix way (``svix-id``, ``svix-timestamp``, ``svix-signature``: HMAC-SHA256
  of ``{id}.{timestamp}.{body}`` under the ``whsec_`` secret), checked by the maintained
  ``standardwebhooks`` package (the same scheme under ``webhook-*`` header names).
- SendGrid signs ``timestamp + body`` with ECDSA P-256 (SHA-256); the public key it shows
  is base64 DER; checked with ``cryptography``.
- Mailgun puts ``{timestamp, token, signature}`` in the JSON body: the signature is the hex
  HMAC-SHA256 of ``timestamp + token`` under the webhook signing key.
- Postmark sends the HTTP basic credentials written into the webhook's URL.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import math
import time
from collections.abc import Callable, Mapping
from typing import Protocol

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_der_public_key
from standardwebhooks import Webhook

from leadmail.adapters.http.json_depth import TOO_DEEP, too_deep
from leadmail.domain.errors import Unauthorized

TOLERANCE_S = 300  # 5 minutes either way: standardwebhooks' own, and everyone else's here
Now = Callable[[], float]  # seconds since 1970


class WebhookNotVerified(Unauthorized):
    """A webhook without the proof its provider gives (401, nothing stored).
    ``challenge``: the WWW-Authenticate value that says what proof is expected, if any."""

    def __init__(self, message: str, challenge: str | None = None) -> None:
        super().__init__(message)
        self.challenge = challenge


class Verifier(Protocol):
    """Checks one provider's proof; raises WebhookNotVerified. ``headers``: names lower-cased."""

    def verify(self, headers: Mapping[str, str], body: bytes) -> None: ...


def _fresh(timestamp: str | int, now: Now, name: str) -> None:
    try:
        seconds = float(timestamp)
    except ValueError:
        raise WebhookNotVerified(f"The {name} is not a number of seconds") from None
    if not math.isfinite(seconds) or abs(now() - seconds) > TOLERANCE_S:
        raise WebhookNotVerified(
            f"The {name} is more than {TOLERANCE_S // 60} minutes from now: refused as a replay"
        )


class ResendSignature:
    def __init__(self, secret: str) -> None:
        self._webhook = Webhook(secret)  # "whsec_<base64>"; the library strips the prefix

    def verify(self, headers: Mapping[str, str], body: bytes) -> None:
        svix = {name: headers.get(f"svix-{name}", "") for name in ("id", "timestamp", "signature")}
        if not all(svix.values()):
            raise WebhookNotVerified(
                "The svix-id, svix-timestamp and svix-signature headers are required"
            )
        try:
            self._webhook.verify(
                body,
                {f"webhook-{name}": value for name, value in svix.items()},
                json_parse=False,
            )
        # Whatever the library finds wrong (a stale timestamp, no signature that matches, a
        # header it cannot split or decode, a body that is not UTF-8): not verified.
        except Exception as e:
            raise WebhookNotVerified(f"The Svix signature was refused: {e}") from None


class SendGridSignature:
    SIGNATURE = "x-twilio-email-event-webhook-signature"
    TIMESTAMP = "x-twilio-email-event-webhook-timestamp"

    def __init__(self, public_key: str, now: Now = time.time) -> None:
        self._key = sendgrid_public_key(public_key)
        self._now = now

    def verify(self, headers: Mapping[str, str], body: bytes) -> None:
        signature, timestamp = headers.get(self.SIGNATURE, ""), headers.get(self.TIMESTAMP, "")
        if not signature or not timestamp:
            raise WebhookNotVerified(
                "The X-Twilio-Email-Event-Webhook-Signature and -Timestamp headers are required"
            )
        _fresh(timestamp, self._now, "signature's timestamp")
        try:
            der = base64.b64decode(signature, validate=True)
            self._key.verify(der, timestamp.encode() + body, ec.ECDSA(hashes.SHA256()))
        except (binascii.Error, ValueError, InvalidSignature):
            raise WebhookNotVerified("The ECDSA signature does not match the body") from None


def sendgrid_public_key(text: str) -> ec.EllipticCurvePublicKey:
    """The key SendGrid shows (base64 of DER); ValueError unless it is a P-256 public key."""
    try:
        key = load_der_public_key(base64.b64decode(text.strip(), validate=True))
    except (binascii.Error, ValueError) as e:
        raise ValueError("is not a base64 DER public key") from e
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        raise ValueError("is not an ECDSA P-256 public key")
    return key


class _MailgunProof(msgspec.Struct):
    timestamp: str | int
    token: str
    signature: str


class _MailgunSigned(msgspec.Struct):
    # Only the proof is read here; the events are read once it holds.
    signature: _MailgunProof


_MAILGUN = msgspec.json.Decoder(_MailgunSigned)


class MailgunSignature:
    def __init__(self, signing_key: str, now: Now = time.time) -> None:
        self._key = signing_key.encode()
        self._now = now

    def verify(self, headers: Mapping[str, str], body: bytes) -> None:
        if too_deep(body):  # the decoder recurses, even into what it skips
            raise WebhookNotVerified(TOO_DEEP)
        try:
            proof = _MAILGUN.decode(body).signature
        except msgspec.DecodeError:  # not JSON, or no signature object of that shape
            raise WebhookNotVerified(
                "The body has no signature object ({timestamp, token, signature})"
            ) from None
        _fresh(proof.timestamp, self._now, "signature's timestamp")
        signed = f"{proof.timestamp}{proof.token}".encode()
        expected = hmac.new(self._key, signed, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected.encode(), proof.signature.lower().encode()):
            raise WebhookNotVerified("The signature does not match the timestamp and token")


class PostmarkCredentials:
    CHALLENGE = 'Basic realm="leadmail webhooks"'

    def __init__(self, credentials: str) -> None:
        self._expected = credentials.encode()  # "user:password"

    def verify(self, headers: Mapping[str, str], body: bytes) -> None:
        scheme, _, token = headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() != "basic":
            raise WebhookNotVerified(
                "HTTP basic credentials are required (the user:password in the webhook's URL)",
                self.CHALLENGE,
            )
        try:
            given = base64.b64decode(token.strip(), validate=True)
        except binascii.Error:
            given = b""
        if not hmac.compare_digest(given, self._expected):
            raise WebhookNotVerified("The basic credentials are not this service's", self.CHALLENGE)
