"""Each provider's webhook payload read as events (domain/provider_events), on the
providers' documented examples: Mailgun's event examples read from its own API description
(shared/providers), Resend's held to the event schemas of its description, SendGrid's and
Postmark's as their webhook references show them. Then the status order and the ids'
one form (domain/message_events.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from leadmail.domain.email import MessageStatus
from leadmail.domain.message_events import (
    MAX_DETAIL,
    Bounce,
    EventType,
    ProviderEvent,
    moves_from,
    provider_message_key,
    status_after,
    stored_forms,
)
from leadmail.domain.provider_events import read_events
from leadmail.domain.suppressions import SuppressionReason
from tests.contract.test_provider_requests import load_spec

# --- Mailgun: the examples of its Events API (the webhook's event-data has their shape) ----

_MAILGUN_EVENTS = (
    "/paths/~1v3~1{domain_name}~1events/get/responses/200/content/application~1json/examples"
)


def mailgun_example(name: str) -> dict[str, Any]:
    spec = load_spec("mailgun")
    [item] = spec.at(f"{_MAILGUN_EVENTS}/{name}/value/items")
    return {"signature": {"timestamp": "1", "token": "t", "signature": "s"}, "event-data": item}


class TestMailgun:
    def test_delivered(self) -> None:
        [event] = read_events("mailgun", mailgun_example("Delivered")).events
        assert event == ProviderEvent(
            provider="mailgun",
            event_id="hK7mQVt1QtqRiOfQXta4sw",
            provider_message_id="20180622182958.1.48906CB188F1A454@exmple.org",
            type=EventType.DELIVERED,
            at=datetime(2018, 6, 22, 18, 29, 59, 626000, tzinfo=UTC),
            detail="OK",
            recipients=("john@example.com",),
        )

    def test_a_permanent_failure_is_a_hard_bounce(self) -> None:
        [event] = read_events("mailgun", mailgun_example("Failed")).events
        assert event.type is EventType.BOUNCED
        assert event.bounce is Bounce.HARD
        assert event.detail == "Not delivering to previously bounced address"
        assert event.recipients == ("slava@mailgun.com",)
        assert event.provider_message_id == "20180622211249.1.2A6098970A380E12@example.org"
        assert event.suppresses is SuppressionReason.BOUNCED

    def test_a_temporary_failure_is_a_soft_bounce(self) -> None:
        payload = mailgun_example("Failed")
        payload["event-data"]["severity"] = "temporary"
        [event] = read_events("mailgun", payload).events
        assert event.bounce is Bounce.SOFT
        assert event.suppresses is None
        assert event.moves_to is None

    @pytest.mark.parametrize(
        ("name", "type_", "detail"),
        [
            ("Complained", EventType.COMPLAINED, ""),
            ("Opened", EventType.OPENED, ""),
            ("Clicked", EventType.CLICKED, "http://example.com/signup"),
        ],
    )
    def test_the_other_kept_types(self, name: str, type_: EventType, detail: str) -> None:
        [event] = read_events("mailgun", mailgun_example(name)).events
        assert event.type is type_
        assert event.detail == detail

    @pytest.mark.parametrize("name", ["Accepted", "Rejected", "Stored", "Unsubscribed"])
    def test_types_not_kept_are_ignored(self, name: str) -> None:
        reading = read_events("mailgun", mailgun_example(name))
        assert (reading.events, reading.ignored, reading.unreadable) == ([], 1, 0)

    @pytest.mark.parametrize(
        "payload", [{}, {"event-data": []}, {"event-data": {"event": "delivered"}}, [], "x"]
    )
    def test_what_cannot_be_read_is_counted(self, payload: Any) -> None:
        reading = read_events("mailgun", payload)
        assert (reading.events, reading.unreadable) == ([], 1)


# --- Resend: payloads of its webhook events, held to its description's schemas -------------


def resend_event(kind: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": kind,
        "created_at": "2024-11-22T23:41:12.126Z",
        "data": {
            "created_at": "2024-11-22T23:41:11.894719+00:00",
            "email_id": "56761188-7520-42d8-8898-ff6fc54ce618",
            "from": "Acme <onboarding@resend.dev>",
            "to": ["delivered@resend.dev"],
            "subject": "Sending this example",
            **(data or {}),
        },
    }


RESEND_BOUNCE = {
    "bounce": {
        "diagnosticCode": ["smtp; 550 5.5.0 Requested action not taken: mailbox unavailable"],
        "message": "The recipient's email provider sent a hard bounce message.",
        "subType": "General",
        "type": "Permanent",
    }
}
RESEND_CLICK = {
    "click": {
        "ipAddress": "122.115.53.11",
        "link": "https://resend.com",
        "timestamp": "2024-11-24T05:00:57.163Z",
        "userAgent": "Mozilla/5.0",
    }
}
RESEND_SCHEMAS = {
    "email.delivered": "EmailDeliveredEvent",
    "email.delivery_delayed": "EmailDeliveryDelayedEvent",
    "email.bounced": "EmailBouncedEvent",
    "email.complained": "EmailComplainedEvent",
    "email.opened": "EmailOpenedEvent",
    "email.clicked": "EmailClickedEvent",
    "email.sent": "EmailSentEvent",
}


class TestResend:
    @pytest.mark.parametrize(
        ("kind", "data", "type_", "bounce"),
        [
            ("email.delivered", None, EventType.DELIVERED, None),
            ("email.delivery_delayed", None, EventType.DEFERRED, None),
            ("email.bounced", RESEND_BOUNCE, EventType.BOUNCED, Bounce.HARD),
            ("email.complained", None, EventType.COMPLAINED, None),
            ("email.opened", None, EventType.OPENED, None),
            ("email.clicked", RESEND_CLICK, EventType.CLICKED, None),
        ],
    )
    def test_each_kept_type(
        self, kind: str, data: dict[str, Any] | None, type_: EventType, bounce: Bounce | None
    ) -> None:
        payload = resend_event(kind, data)
        spec = load_spec("resend")
        spec.validator(f"/components/schemas/{RESEND_SCHEMAS[kind]}").validate(payload)

        [event] = read_events("resend", payload, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W").events

        assert event.event_id == "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"  # the svix-id
        assert event.provider_message_id == "56761188-7520-42d8-8898-ff6fc54ce618"
        assert event.type is type_
        assert event.bounce is bounce
        assert event.at == datetime(2024, 11, 22, 23, 41, 12, 126000, tzinfo=UTC)
        assert event.recipients == ("delivered@resend.dev",)

    def test_a_bounce_says_why_and_a_click_where(self) -> None:
        [bounce] = read_events("resend", resend_event("email.bounced", RESEND_BOUNCE), "a").events
        [click] = read_events("resend", resend_event("email.clicked", RESEND_CLICK), "b").events
        assert bounce.detail == "The recipient's email provider sent a hard bounce message."
        assert click.detail == "https://resend.com"

    @pytest.mark.parametrize("kind", ["Transient", "Undetermined"])
    def test_a_bounce_that_may_pass_later_is_soft(self, kind: str) -> None:
        data = {"bounce": {**RESEND_BOUNCE["bounce"], "type": kind}}
        [event] = read_events("resend", resend_event("email.bounced", data), "a").events
        assert event.bounce is Bounce.SOFT

    def test_types_not_kept_are_ignored(self) -> None:
        payload = resend_event("email.sent")
        load_spec("resend").validator("/components/schemas/EmailSentEvent").validate(payload)
        reading = read_events("resend", payload, "a")
        assert (reading.events, reading.ignored) == ([], 1)

    def test_an_event_without_its_svix_id_cannot_be_kept(self) -> None:
        reading = read_events("resend", resend_event("email.delivered"), "")
        assert (reading.events, reading.unreadable) == ([], 1)


# --- SendGrid: a batch as its Event Webhook reference shows one ----------------------------

_SG_LIBRARY_ID = "LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0"
_SG_MESSAGE = "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.000000000000000000000"
_SG_COMMON = {
    "email": "example@test.com",
    "timestamp": 1513299569,
    "smtp-id": "<14c5d75ce93.dfd.64b469@ismtpd-555>",
    "category": "cat facts",
    "sg_message_id": _SG_MESSAGE,
}
SENDGRID_BATCH = [
    {**_SG_COMMON, "event": "processed", "sg_event_id": "rbtnWrG1DVDGGGFHFyun0A=="},
    {**_SG_COMMON, "event": "deferred", "sg_event_id": "t7LEShmowp86DTdUW8M-GQ==",
     "response": "400 try again later", "attempt": "5"},
    {**_SG_COMMON, "event": "delivered", "sg_event_id": "rWVYmVk90MjZJ9iohOBa3w==",
     "response": "250 OK"},
    {**_SG_COMMON, "event": "open", "sg_event_id": "FOTFFO0ecsBE-zxFXfs6WA==",
     "useragent": "Mozilla/4.0", "ip": "255.255.255.255"},
    {**_SG_COMMON, "event": "click", "sg_event_id": "kCAi1KttyQdEKHhdC-nuEA==",
     "useragent": "Mozilla/4.0", "ip": "255.255.255.255", "url": "http://www.sendgrid.com/"},
    {**_SG_COMMON, "event": "bounce", "sg_event_id": "6g4ZI7SA-xmRDv57GoPIPw==",
     "reason": "500 unknown recipient", "status": "5.0.0", "type": "bounce"},
    {**_SG_COMMON, "event": "bounce", "sg_event_id": "Bl0ck3dAaaaaaaaaaaaaaa==",
     "reason": "550 blocked by policy", "status": "5.0.0", "type": "blocked"},
    {**_SG_COMMON, "event": "dropped", "sg_event_id": "zmzJhfJgAfUSOW80yEbPyw==",
     "reason": "Bounced Address", "status": "5.0.0"},
    {**_SG_COMMON, "event": "spamreport", "sg_event_id": "37nvH5QBz858KGVYCM4uOA=="},
    {**_SG_COMMON, "event": "unsubscribe", "sg_event_id": "zz_BjPgU_5pS-J8vlfB1sg=="},
    {"event": "delivered"},  # no ids: cannot be kept
]  # fmt: skip


class TestSendGrid:
    def test_a_batch_is_read_event_by_event(self) -> None:
        reading = read_events("sendgrid", SENDGRID_BATCH)

        kept = [(e.type, e.bounce, e.detail) for e in reading.events]
        assert kept == [
            (EventType.DEFERRED, None, "400 try again later"),
            (EventType.DELIVERED, None, "250 OK"),
            (EventType.OPENED, None, ""),
            (EventType.CLICKED, None, "http://www.sendgrid.com/"),
            (EventType.BOUNCED, Bounce.HARD, "500 unknown recipient"),
            (EventType.BOUNCED, Bounce.SOFT, "550 blocked by policy"),
            (EventType.COMPLAINED, None, ""),
        ]
        assert (reading.ignored, reading.unreadable) == (3, 1)
        assert {e.provider_message_id for e in reading.events} == {"14c5d75ce93.dfd.64b469"}
        assert reading.events[1].event_id == "rWVYmVk90MjZJ9iohOBa3w=="
        assert reading.events[1].at == datetime(2017, 12, 15, 0, 59, 29, tzinfo=UTC)
        assert reading.events[1].recipients == ("example@test.com",)

    def test_the_library_example_dropped_event_is_ignored(self) -> None:
        reading = read_events(
            "sendgrid",
            [{"email": "hello@world.com", "event": "dropped", "reason": "Bounced Address",
              "sg_event_id": "ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA",
              "sg_message_id": _SG_LIBRARY_ID,
              "timestamp": 1600112492}],
        )  # fmt: skip
        assert (reading.events, reading.ignored) == ([], 1)

    def test_a_body_that_is_not_a_batch_cannot_be_read(self) -> None:
        reading = read_events("sendgrid", SENDGRID_BATCH[2])
        assert (reading.events, reading.unreadable) == ([], 1)


# --- Postmark: its webhooks' documented examples -------------------------------------------

POSTMARK_BOUNCE = {
    "RecordType": "Bounce",
    "ID": 42,
    "Type": "HardBounce",
    "TypeCode": 1,
    "Name": "Hard bounce",
    "Tag": "Test",
    "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
    "Description": "The server was unable to deliver your message (ex: unknown user, mailbox"
    " not found).",
    "Details": "Test bounce details",
    "Email": "john@example.com",
    "From": "sender@example.com",
    "BouncedAt": "2014-08-01T13:28:10.2735393-04:00",
    "DumpAvailable": True,
    "Inactive": True,
    "CanActivate": True,
    "Subject": "Test subject",
    "MessageStream": "outbound",
}
POSTMARK_DELIVERY = {
    "RecordType": "Delivery",
    "MessageStream": "outbound",
    "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
    "Recipient": "john@example.com",
    "DeliveredAt": "2019-11-05T16:33:54.9070259Z",
    "Details": "Test delivery webhook details",
    "Tag": "welcome-email",
    "ServerID": 23,
    "Metadata": {"a_key": "a_value", "b_key": "b_value"},
}
POSTMARK_COMPLAINT = {
    **POSTMARK_BOUNCE,
    "RecordType": "SpamComplaint",
    "ID": 43,
    "Type": "SpamComplaint",
    "TypeCode": 512,
    "Name": "Spam complaint",
}
POSTMARK_OPEN = {
    "RecordType": "Open",
    "MessageStream": "outbound",
    "FirstOpen": True,
    "Client": {"Name": "Chrome 35.0.1916.153", "Company": "Google"},
    "Platform": "WebMail",
    "UserAgent": "Mozilla/5.0",
    "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
    "ReceivedAt": "2019-11-05T16:33:54.9070259Z",
    "Tag": "welcome-email",
    "Recipient": "john@example.com",
}
POSTMARK_CLICK = {
    **POSTMARK_OPEN,
    "RecordType": "Click",
    "ClickLocation": "HTML",
    "OriginalLink": "https://example.com",
}


class TestPostmark:
    def test_a_hard_bounce_keeps_its_record_id(self) -> None:
        [event] = read_events("postmark", POSTMARK_BOUNCE).events
        assert event.event_id == "42"
        assert (event.type, event.bounce) == (EventType.BOUNCED, Bounce.HARD)
        assert event.at == datetime(2014, 8, 1, 17, 28, 10, 273000, tzinfo=UTC)
        assert event.recipients == ("john@example.com",)
        assert event.detail.startswith("The server was unable to deliver your message")

    def test_a_soft_bounce(self) -> None:
        soft = {**POSTMARK_BOUNCE, "Type": "SoftBounce", "TypeCode": 4096, "Inactive": False}
        [event] = read_events("postmark", soft).events
        assert event.bounce is Bounce.SOFT

    def test_a_delivery_without_a_record_id_has_one_made_of_what_it_holds(self) -> None:
        [event] = read_events("postmark", POSTMARK_DELIVERY).events
        [other] = read_events("postmark", {**POSTMARK_DELIVERY, "Recipient": "ann@x.com"}).events
        assert event.type is EventType.DELIVERED
        assert event.event_id.startswith("883953f4-6105-42a2-a16a-77a8eac79483/Delivery/")
        assert other.event_id != event.event_id  # one delivery per recipient
        assert read_events("postmark", dict(POSTMARK_DELIVERY)).events == [event]

    @pytest.mark.parametrize(
        ("payload", "type_", "detail"),
        [
            (POSTMARK_COMPLAINT, EventType.COMPLAINED, None),
            (POSTMARK_OPEN, EventType.OPENED, ""),
            (POSTMARK_CLICK, EventType.CLICKED, "https://example.com"),
        ],
    )
    def test_the_other_kept_types(
        self, payload: dict[str, Any], type_: EventType, detail: str | None
    ) -> None:
        [event] = read_events("postmark", payload).events
        assert event.type is type_
        assert detail is None or event.detail == detail

    def test_a_subscription_change_is_ignored(self) -> None:
        reading = read_events("postmark", {"RecordType": "SubscriptionChange", "MessageID": "x"})
        assert (reading.events, reading.ignored) == ([], 1)


# --- the rules -----------------------------------------------------------------------------


class TestIds:
    @pytest.mark.parametrize(
        ("provider", "raw", "key"),
        [
            ("mailgun", "<20180622182958.1.48906CB188F1A454@exmple.org>",
             "20180622182958.1.48906CB188F1A454@exmple.org"),
            ("mailgun", "20180622182958.1.48906CB188F1A454@exmple.org",
             "20180622182958.1.48906CB188F1A454@exmple.org"),
            ("sendgrid", "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0",
             "14c5d75ce93.dfd.64b469"),
            ("sendgrid", _SG_LIBRARY_ID, "LRzXl_NHStOGhQ4kofSm_A"),
            ("sendgrid", "LRzXl_NHStOGhQ4kofSm_A", "LRzXl_NHStOGhQ4kofSm_A"),
            ("resend", " 4ef9a417-02e9-4d39 ", "4ef9a417-02e9-4d39"),
        ],
    )  # fmt: skip
    def test_one_form_for_the_send_answer_and_the_events(
        self, provider: str, raw: str, key: str
    ) -> None:
        assert provider_message_key(provider, raw) == key
        assert stored_forms(key) == (key, f"<{key}>")

    def test_an_event_without_usable_ids_is_refused(self) -> None:
        at = datetime(2026, 1, 1, tzinfo=UTC)
        with pytest.raises(ValueError, match="id"):
            ProviderEvent.of("resend", "", "m", EventType.DELIVERED, at)
        with pytest.raises(ValueError, match="message id"):
            ProviderEvent.of("mailgun", "e", "<>", EventType.DELIVERED, at)

    def test_a_detail_is_one_line_and_cut(self) -> None:
        at = datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
        event = ProviderEvent.of(
            "resend", "e", "m", EventType.DEFERRED, at, detail="a\r\nb\x00\t" + "c" * 900
        )
        assert event.detail.startswith("a b c")
        assert len(event.detail) == MAX_DETAIL
        assert event.at.microsecond == 123000
        assert event.bounce is None


class TestStatusOrder:
    def test_each_status_leaves_only_for_a_later_one(self) -> None:
        assert moves_from(MessageStatus.DELIVERED) == (MessageStatus.SENT,)
        assert moves_from(MessageStatus.BOUNCED) == (MessageStatus.SENT, MessageStatus.DELIVERED)
        assert moves_from(MessageStatus.COMPLAINED) == (
            MessageStatus.SENT,
            MessageStatus.DELIVERED,
            MessageStatus.BOUNCED,
        )

    @pytest.mark.parametrize(
        ("current", "target", "after"),
        [
            (MessageStatus.SENT, MessageStatus.DELIVERED, MessageStatus.DELIVERED),
            (MessageStatus.BOUNCED, MessageStatus.DELIVERED, MessageStatus.BOUNCED),
            (MessageStatus.DELIVERED, MessageStatus.BOUNCED, MessageStatus.BOUNCED),
            (MessageStatus.COMPLAINED, MessageStatus.BOUNCED, MessageStatus.COMPLAINED),
            (MessageStatus.SENT, None, MessageStatus.SENT),
            # no provider id yet, or given up on: events do not move them
            (MessageStatus.PENDING, MessageStatus.DELIVERED, MessageStatus.PENDING),
            (MessageStatus.FAILED, MessageStatus.COMPLAINED, MessageStatus.FAILED),
        ],
    )
    def test_never_backwards(
        self, current: MessageStatus, target: MessageStatus | None, after: MessageStatus
    ) -> None:
        assert status_after(current, target) is after

    @pytest.mark.parametrize(
        ("type_", "bounce", "moves", "suppresses"),
        [
            (EventType.DELIVERED, None, MessageStatus.DELIVERED, None),
            (EventType.BOUNCED, Bounce.HARD, MessageStatus.BOUNCED, SuppressionReason.BOUNCED),
            (EventType.BOUNCED, Bounce.SOFT, None, None),
            (EventType.COMPLAINED, None, MessageStatus.COMPLAINED, SuppressionReason.COMPLAINED),
            (EventType.DEFERRED, None, None, None),
            (EventType.OPENED, None, None, None),
            (EventType.CLICKED, None, None, None),
        ],
    )
    def test_what_each_event_moves_and_suppresses(
        self,
        type_: EventType,
        bounce: Bounce | None,
        moves: MessageStatus | None,
        suppresses: SuppressionReason | None,
    ) -> None:
        at = datetime(2026, 1, 1, tzinfo=UTC)
        event = ProviderEvent.of("resend", "e", "m", type_, at, bounce=bounce)
        assert event.moves_to is moves
        assert event.suppresses is suppresses
