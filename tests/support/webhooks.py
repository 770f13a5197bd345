"""Signed webhooks as each provider sends them, for tests: a body, and the headers (or the
signature object inside it) its provider would send with it, made with the test's own
secrets the way the provider's documentation says it signs."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from standardwebhooks import Webhook


@dataclass(frozen=True)
class ProviderSecrets:
    """One installation's webhook settings and what the providers sign with."""

    resend_secret: str
    sendgrid_private: ec.EllipticCurvePrivateKey
    mailgun_key: str
    postmark_auth: str

    @classmethod
    def fresh(cls) -> ProviderSecrets:
        return cls(
            resend_secret="whsec_" + base64.b64encode(secrets.token_bytes(24)).decode(),
            sendgrid_private=ec.generate_private_key(ec.SECP256R1()),
            mailgun_key="key-" + secrets.token_hex(16),
            postmark_auth=f"postmark:{secrets.token_urlsafe(18)}",
        )

    @property
    def sendgrid_public(self) -> str:
        der = self.sendgrid_private.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return base64.b64encode(der).decode()

    def env(self) -> dict[str, str]:
        """LEADMAIL_* settings that turn on all four webhooks."""
        return {
            "LEADMAIL_RESEND_WEBHOOK_SECRET": self.resend_secret,
            "LEADMAIL_SENDGRID_WEBHOOK_PUBLIC_KEY": self.sendgrid_public,
            "LEADMAIL_MAILGUN_WEBHOOK_SIGNING_KEY": self.mailgun_key,
            "LEADMAIL_POSTMARK_WEBHOOK_AUTH": self.postmark_auth,
        }

    def signed(
        self, provider: str, payload: Any, *, at: float | None = None, svix_id: str | None = None
    ) -> tuple[bytes, dict[str, str]]:
        """``payload`` as ``provider`` would POST it, signed at ``at`` (now by default)."""
        moment = time.time() if at is None else at
        if provider == "resend":
            text = json.dumps(payload)
            msg_id = svix_id or f"msg_{secrets.token_hex(12)}"
            svix = Webhook(self.resend_secret).sign(
                msg_id, datetime.fromtimestamp(moment, UTC), text
            )
            return text.encode(), {
                "svix-id": msg_id,
                "svix-timestamp": str(int(moment)),
                "svix-signature": svix,
            }
        if provider == "sendgrid":
            body = json.dumps(payload).encode() + b"\r\n"
            stamp = str(int(moment))
            der = self.sendgrid_private.sign(stamp.encode() + body, ec.ECDSA(hashes.SHA256()))
            return body, {
                "X-Twilio-Email-Event-Webhook-Signature": base64.b64encode(der).decode(),
                "X-Twilio-Email-Event-Webhook-Timestamp": stamp,
            }
        if provider == "mailgun":
            stamp, token = str(int(moment)), secrets.token_hex(25)
            digest = hmac.new(
                self.mailgun_key.encode(), f"{stamp}{token}".encode(), hashlib.sha256
            ).hexdigest()
            proof = {"timestamp": stamp, "token": token, "signature": digest}
            return json.dumps({"signature": proof, **payload}).encode(), {}
        if provider == "postmark":
            auth = base64.b64encode(self.postmark_auth.encode()).decode()
            return json.dumps(payload).encode(), {"Authorization": f"Basic {auth}"}
        raise ValueError(provider)


def event_payload(
    provider: str,
    kind: str,
    provider_message_id: str,
    *,
    recipient: str = "ada@example.com",
    event_id: str | None = None,
    at: float | None = None,
) -> Any:
    """One event of ``kind`` (delivered, hard_bounce, soft_bounce, complained, opened) about
    the message the provider gave ``provider_message_id``, in the provider's own shape
    (what mailgun's payload lacks is its signature: ``signed`` adds it)."""
    moment = time.time() if at is None else at
    iso = (
        datetime.fromtimestamp(moment, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )
    event_id = event_id or secrets.token_hex(10)
    if provider == "resend":
        types = {
            "delivered": "email.delivered",
            "hard_bounce": "email.bounced",
            "soft_bounce": "email.bounced",
            "complained": "email.complained",
            "opened": "email.opened",
        }
        data: dict[str, Any] = {
            "email_id": provider_message_id,
            "created_at": iso,
            "from": "Academy <hello@academy.example.com>",
            "to": [recipient],
            "subject": "Welcome",
        }
        if kind.endswith("bounce"):
            data["bounce"] = {
                "diagnosticCode": ["smtp; 550 5.1.1 user unknown"],
                "message": "The recipient's mail server rejected the address",
                "subType": "General",
                "type": "Permanent" if kind == "hard_bounce" else "Transient",
            }
        return {"type": types[kind], "created_at": iso, "data": data}
    if provider == "sendgrid":
        event = {
            "delivered": {"event": "delivered", "response": "250 OK"},
            "hard_bounce": {"event": "bounce", "type": "bounce", "reason": "550 5.1.1 unknown"},
            "soft_bounce": {"event": "bounce", "type": "blocked", "reason": "550 blocked"},
            "complained": {"event": "spamreport"},
            "opened": {"event": "open"},
        }[kind]
        return [
            {
                "email": recipient,
                "timestamp": int(moment),
                "sg_event_id": event_id,
                "sg_message_id": f"{provider_message_id}.filterdrecv-5645d9c87f-78xgx-1-0",
                **event,
            }
        ]
    if provider == "mailgun":
        event = {
            "delivered": {"event": "delivered"},
            "hard_bounce": {"event": "failed", "severity": "permanent", "reason": "bounce"},
            "soft_bounce": {"event": "failed", "severity": "temporary", "reason": "generic"},
            "complained": {"event": "complained"},
            "opened": {"event": "opened"},
        }[kind]
        return {
            "event-data": {
                "id": event_id,
                "timestamp": moment,
                "recipient": recipient,
                "message": {"headers": {"message-id": provider_message_id.strip("<>")}},
                **event,
            }
        }
    if provider == "postmark":
        if kind == "delivered":
            return {
                "RecordType": "Delivery",
                "MessageID": provider_message_id,
                "Recipient": recipient,
                "DeliveredAt": iso,
                "Details": "Test delivery webhook details",
                "MessageStream": "outbound",
            }
        if kind == "opened":
            return {
                "RecordType": "Open",
                "MessageID": provider_message_id,
                "Recipient": recipient,
                "ReceivedAt": iso,
                "FirstOpen": True,
                "MessageStream": "outbound",
            }
        record = "SpamComplaint" if kind == "complained" else "Bounce"
        bounce_type = {"hard_bounce": "HardBounce", "soft_bounce": "SoftBounce"}.get(
            kind, "SpamComplaint"
        )
        return {
            "RecordType": record,
            "ID": int(event_id, 16) % 10**12,
            "Type": bounce_type,
            "MessageID": provider_message_id,
            "Email": recipient,
            "BouncedAt": iso,
            "Description": "The server was unable to deliver your message",
            "Inactive": kind != "soft_bounce",
            "MessageStream": "outbound",
        }
    raise ValueError(provider)
