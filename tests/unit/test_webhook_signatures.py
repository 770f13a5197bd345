"""Each provider's webhook proof (adapters/http/webhooks/signatures.py), checked on the
provider's own documented example where it publishes one, then tampered with, taken
away, and sent too late or too early.

- Resend signs the Standard Webhooks / Svix way: the example is the specification's own
  test vector (standard-webhooks/standard-webhooks, libraries/python/tests: secret, id,
  timestamp, payload and the signature they give).
- SendGrid: the signed example of its own library's tests (sendgrid/sendgrid-python,
  test/unit/test_eventwebhook.py): public key, signature, timestamp and payload.
- Mailgun documents its scheme and a payload, not a key with the signature it gives: the
  example's timestamp and token are signed here with a key of the test's.
- Postmark signs nothing: basic credentials in the webhook's URL.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from leadmail.adapters.http.webhooks.signatures import (
    TOLERANCE_S,
    MailgunSignature,
    PostmarkCredentials,
    ResendSignature,
    SendGridSignature,
    WebhookNotVerified,
    sendgrid_public_key,
)

# --- Resend (Standard Webhooks' test vector) ---------------------------------------------

SVIX_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SVIX_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SVIX_TIMESTAMP = 1614265330
SVIX_BODY = b'{"test": 2432232314}'
SVIX_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
SVIX_AT = datetime.fromtimestamp(SVIX_TIMESTAMP, UTC)


def svix_headers(**changes: str) -> dict[str, str]:
    headers = {
        "svix-id": SVIX_ID,
        "svix-timestamp": str(SVIX_TIMESTAMP),
        "svix-signature": SVIX_SIGNATURE,
    }
    headers.update({k.replace("_", "-"): v for k, v in changes.items()})
    return {k: v for k, v in headers.items() if v}


class TestResend:
    def test_the_documented_example_verifies(self) -> None:
        with time_machine.travel(SVIX_AT, tick=False):
            ResendSignature(SVIX_SECRET).verify(svix_headers(), SVIX_BODY)

    def test_one_good_signature_among_several_verifies(self) -> None:
        rotated = f"v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= {SVIX_SIGNATURE}"
        with time_machine.travel(SVIX_AT, tick=False):
            ResendSignature(SVIX_SECRET).verify(svix_headers(svix_signature=rotated), SVIX_BODY)

    @pytest.mark.parametrize(
        ("headers", "body"),
        [
            (svix_headers(), b'{"test": 2432232315}'),  # the body tampered with
            (svix_headers(svix_id="msg_another"), SVIX_BODY),  # another event's id
            (svix_headers(svix_signature="v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA="),
             SVIX_BODY),
            (svix_headers(svix_signature="v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="),
             SVIX_BODY),
            (svix_headers(svix_signature="nonsense"), SVIX_BODY),  # not "v1,<base64>"
            (svix_headers(svix_signature="v1,%%%"), SVIX_BODY),
            (svix_headers(svix_timestamp="soon"), SVIX_BODY),
            (svix_headers(), b"\xff\xfe not UTF-8"),
            (svix_headers(svix_id=""), SVIX_BODY),
            (svix_headers(svix_timestamp=""), SVIX_BODY),
            (svix_headers(svix_signature=""), SVIX_BODY),
            ({}, SVIX_BODY),
        ],
    )  # fmt: skip
    def test_tampered_or_missing_is_refused(self, headers: dict[str, str], body: bytes) -> None:
        with time_machine.travel(SVIX_AT, tick=False), pytest.raises(WebhookNotVerified):
            ResendSignature(SVIX_SECRET).verify(headers, body)

    def test_another_secret_is_refused(self) -> None:
        other = "whsec_" + base64.b64encode(b"another installation's").decode()
        with time_machine.travel(SVIX_AT, tick=False), pytest.raises(WebhookNotVerified):
            ResendSignature(other).verify(svix_headers(), SVIX_BODY)

    @pytest.mark.parametrize("offset", [TOLERANCE_S + 1, -TOLERANCE_S - 1])
    def test_a_signature_more_than_five_minutes_from_now_is_refused(self, offset: int) -> None:
        with (
            time_machine.travel(SVIX_AT + timedelta(seconds=offset), tick=False),
            pytest.raises(WebhookNotVerified, match="timestamp"),
        ):
            ResendSignature(SVIX_SECRET).verify(svix_headers(), SVIX_BODY)

    def test_within_five_minutes_verifies(self) -> None:
        with time_machine.travel(SVIX_AT + timedelta(seconds=TOLERANCE_S - 1), tick=False):
            ResendSignature(SVIX_SECRET).verify(svix_headers(), SVIX_BODY)


# --- SendGrid (its library's signed example) ----------------------------------------------

SENDGRID_KEY = (
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe"
    "62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g=="
)
SENDGRID_OTHER_KEY = (
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqTxd43gyp8IOEto2LdIfjRQrIbsd4SXZkLW6jDutdhXSJCWHw8R"
    "Entlo7aNDthvj+y7GjUuFDb/R1NGe1OPzpA=="
)
SENDGRID_SIGNATURE = (
    "MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15T"
    "luLtEZtM="
)
SENDGRID_OTHER_SIGNATURE = (
    "MEUCIQCtIHJeH93Y+qpYeWrySphQgpNGNr/U+UyUlBkU6n7RAwIgJTz2C+8a8xonZGi6BpSzoQsbVRamr2nlxFD"
    "WYNH3j/0="
)
SENDGRID_TIMESTAMP = "1600112502"
SENDGRID_EVENT = {
    "email": "hello@world.com",
    "event": "dropped",
    "reason": "Bounced Address",
    "sg_event_id": "ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA",
    "sg_message_id": "LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0",
    "smtp-id": "<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>",
    "timestamp": 1600112492,
}
# As SendGrid posts it: compact JSON, sorted keys, a CRLF at the end (all signed).
SENDGRID_BODY = (
    json.dumps([SENDGRID_EVENT], sort_keys=True, separators=(",", ":")) + "\r\n"
).encode()


def _public_der(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> str:
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(der).decode()


# Public keys, but not of SendGrid's kind: RSA, and ECDSA on another curve.
OTHER_KEYS = [
    _public_der(rsa.generate_private_key(public_exponent=65537, key_size=1024)),
    _public_der(ec.generate_private_key(ec.SECP384R1())),
]


def sendgrid_headers(
    signature: str = SENDGRID_SIGNATURE, timestamp: str = SENDGRID_TIMESTAMP
) -> dict[str, str]:
    headers = {
        SendGridSignature.SIGNATURE: signature,
        SendGridSignature.TIMESTAMP: timestamp,
    }
    return {k: v for k, v in headers.items() if v}


def sendgrid(key: str = SENDGRID_KEY, now: float = float(SENDGRID_TIMESTAMP)) -> SendGridSignature:
    return SendGridSignature(key, now=lambda: now)


class TestSendGrid:
    def test_the_documented_example_verifies(self) -> None:
        sendgrid().verify(sendgrid_headers(), SENDGRID_BODY)

    @pytest.mark.parametrize(
        ("headers", "body"),
        [
            (sendgrid_headers(), SENDGRID_BODY.replace(b"dropped", b"dropper")),
            (sendgrid_headers(), SENDGRID_BODY.rstrip()),  # the signed CRLF left out
            (sendgrid_headers(), b"payload"),
            (sendgrid_headers(signature=SENDGRID_OTHER_SIGNATURE), SENDGRID_BODY),
            (sendgrid_headers(signature="not base64!"), SENDGRID_BODY),
            (sendgrid_headers(signature=base64.b64encode(b"not DER").decode()), SENDGRID_BODY),
            (sendgrid_headers(timestamp="1600112503"), SENDGRID_BODY),  # another moment
            (sendgrid_headers(timestamp="timestamp"), SENDGRID_BODY),
            (sendgrid_headers(signature=""), SENDGRID_BODY),
            (sendgrid_headers(timestamp=""), SENDGRID_BODY),
        ],
    )
    def test_tampered_or_missing_is_refused(self, headers: dict[str, str], body: bytes) -> None:
        with pytest.raises(WebhookNotVerified):
            sendgrid(now=float(SENDGRID_TIMESTAMP) + 1).verify(headers, body)

    def test_another_key_is_refused(self) -> None:
        with pytest.raises(WebhookNotVerified, match="does not match"):
            sendgrid(SENDGRID_OTHER_KEY).verify(sendgrid_headers(), SENDGRID_BODY)

    @pytest.mark.parametrize("offset", [TOLERANCE_S + 1, -TOLERANCE_S - 1])
    def test_a_timestamp_more_than_five_minutes_from_now_is_refused(self, offset: int) -> None:
        late = sendgrid(now=float(SENDGRID_TIMESTAMP) + offset)
        with pytest.raises(WebhookNotVerified, match="replay"):
            late.verify(sendgrid_headers(), SENDGRID_BODY)

    @pytest.mark.parametrize(
        "text",
        ["", "not base64!", base64.b64encode(b"not DER").decode(), *OTHER_KEYS],
    )
    def test_a_key_that_is_not_p256_is_refused_at_start(self, text: str) -> None:
        with pytest.raises(ValueError, match="key"):
            sendgrid_public_key(text)


# --- Mailgun (its documented timestamp and token, signed with a key of ours) ---------------

MAILGUN_KEY = "key-0123456789abcdef0123456789abcdef"
MAILGUN_TIMESTAMP = "1529006854"
MAILGUN_TOKEN = "a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0"


def mailgun_body(
    timestamp: str = MAILGUN_TIMESTAMP,
    token: str = MAILGUN_TOKEN,
    signature: str | None = None,
    key: str = MAILGUN_KEY,
) -> bytes:
    digest = hmac.new(key.encode(), f"{timestamp}{token}".encode(), hashlib.sha256).hexdigest()
    return json.dumps(
        {
            "signature": {
                "timestamp": timestamp,
                "token": token,
                "signature": digest if signature is None else signature,
            },
            "event-data": {
                "event": "opened",
                "timestamp": 1529006854.329574,
                "id": "DACSsAdVSeGpLid7TN03WA",
            },
        }
    ).encode()


def mailgun(now: float = float(MAILGUN_TIMESTAMP)) -> MailgunSignature:
    return MailgunSignature(MAILGUN_KEY, now=lambda: now)


class TestMailgun:
    def test_a_body_signed_with_the_key_verifies(self) -> None:
        mailgun().verify({}, mailgun_body())

    def test_a_numeric_timestamp_verifies(self) -> None:
        body = json.loads(mailgun_body())
        body["signature"]["timestamp"] = int(MAILGUN_TIMESTAMP)
        mailgun().verify({}, json.dumps(body).encode())

    @pytest.mark.parametrize(
        "body",
        [
            mailgun_body(key="key-another-installation"),
            mailgun_body(
                signature="d2271d12299f6592d9d44cd9d250f0704e4674c30d79d07c47a66f95ce71cf55"
            ),
            mailgun_body(signature=""),
            json.dumps(
                {**json.loads(mailgun_body()), "signature": {"timestamp": "1529006854"}}
            ).encode(),
            json.dumps({"event-data": {"event": "opened"}}).encode(),
            b"not JSON",
            b"[]",
            # nested past what the decoder can recurse into: refused, not a crash
            b'{"deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        ],
    )
    def test_tampered_or_missing_is_refused(self, body: bytes) -> None:
        with pytest.raises(WebhookNotVerified):
            mailgun().verify({}, body)

    def test_the_token_is_signed_too(self) -> None:
        signed = json.loads(mailgun_body())
        signed["signature"]["token"] = MAILGUN_TOKEN[:-1] + "1"
        with pytest.raises(WebhookNotVerified, match="does not match"):
            mailgun().verify({}, json.dumps(signed).encode())

    @pytest.mark.parametrize("offset", [TOLERANCE_S + 1, -TOLERANCE_S - 1])
    def test_a_timestamp_more_than_five_minutes_from_now_is_refused(self, offset: int) -> None:
        with pytest.raises(WebhookNotVerified, match="replay"):
            mailgun(now=float(MAILGUN_TIMESTAMP) + offset).verify({}, mailgun_body())


# --- Postmark (basic credentials) -----------------------------------------------------------


def basic(credentials: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(credentials.encode()).decode()}


class TestPostmark:
    def test_the_credentials_in_the_url_verify(self) -> None:
        PostmarkCredentials("postmark:s3cret:with-colon").verify(
            basic("postmark:s3cret:with-colon"), b"{}"
        )

    @pytest.mark.parametrize(
        "headers",
        [
            basic("postmark:wrong"),
            basic("other:s3cret"),
            basic("postmark:s3cret "),
            {"authorization": "Bearer postmark:s3cret"},
            {"authorization": "Basic %%%"},
            {"authorization": "Basic"},
            {},
        ],
    )
    def test_other_or_missing_credentials_are_refused(self, headers: dict[str, str]) -> None:
        with pytest.raises(WebhookNotVerified) as refused:
            PostmarkCredentials("postmark:s3cret").verify(headers, b"{}")
        assert refused.value.challenge == PostmarkCredentials.CHALLENGE
