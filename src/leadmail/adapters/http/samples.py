"""Sample domain objects for the OpenAPI document's examples (examples.py): one school, one
lead, one template, the messages of a send and of a failed one."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from leadmail.domain.custom_fields import FieldValue
from leadmail.domain.delivery import ProviderRejected, ProviderUnavailable
from leadmail.domain.email import Message, MessageStatus
from leadmail.domain.errors import LeadmailError
from leadmail.domain.lead_actions import ActionOrder, ActionStatus, LeadAction
from leadmail.domain.lead_imports import ImportMode, ImportStatus, LeadImport, RowError
from leadmail.domain.leads import Lead
from leadmail.domain.message_events import EventType, MessageEvent
from leadmail.domain.privacy import DataSubject, Erased, ImportRow
from leadmail.domain.suppressions import Suppression, SuppressionReason
from leadmail.domain.templates import Template, TemplateKind
from leadmail.services.results import SendResult

AT = datetime(2026, 3, 2, 9, 30, 15, 123000, tzinfo=UTC)
ACCOUNT = "acc_Xq3T9mRk2LpW8vNb"
SENDER = "admissions@northwind.example.com"

LEAD = Lead(
    lead_id="ld_3kTMd9PqW7bXo2vL1cYh8A",
    account_id=ACCOUNT,
    name="Ada Lovelace",
    email="ada@example.com",
    source="open-day",
    note="Asked about the March cohort",
    phone="+44 20 7946 0958",
    created_at=AT,
    updated_at=AT,
    tags=("evening", "open-day"),
    fields={"city": "Leeds", "course_of_interest": "Data science", "age": 34, "newsletter": True},
)
# LEAD's fields after the update example (request_examples.REQUESTS[LeadPatchIn]) merged into them.
UPDATED_FIELDS: dict[str, FieldValue] = {
    "city": "Leeds",
    "course_of_interest": "Data science",
    "age": 34,
    "cohort": "2026-03",
}
IMPORT = LeadImport(
    import_id="imp_Qm4Zr8Tw2Nc6Vx1Lb9Pk3A",
    account_id=ACCOUNT,
    mode=ImportMode.UPSERT,
    tags=("open-day",),
    status=ImportStatus.QUEUED,
    created_at=AT,
    updated_at=AT,
    size=1_482_113,
)
# The same import a minute later, half way; and when it is done.
IMPORT_RUNNING = replace(
    IMPORT,
    status=ImportStatus.RUNNING,
    started_at=AT,
    total=20_000,
    rows=10_000,
    created=9_120,
    updated=850,
    skipped=12,
    failed=18,
)
# A bulk action as queued, and half way.
ACTION_ORDER = ActionOrder.parse("add_tags", ["cohort-b"], {"tag": "open-day", "source": "fair"})
ACTION = LeadAction(
    action_id="act_Jw3Nq8Rt5Lz2Kc7Vb4Mx9A",
    account_id=ACCOUNT,
    kind=ACTION_ORDER.kind,
    tags=ACTION_ORDER.tags,
    segment=ACTION_ORDER.segment,
    status=ActionStatus.QUEUED,
    created_at=AT,
    updated_at=AT,
)
ACTION_RUNNING = replace(
    ACTION,
    status=ActionStatus.RUNNING,
    started_at=AT,
    total=42_000,
    done=20_000,
    changed=19_870,
    skipped=130,
)
IMPORT_ERRORS = [
    RowError(
        14,
        "email",
        "is not a valid email address: An email address must have an @-sign.",
        "maria.example.com",
    ),
    RowError(
        230, "email", "row 4012 has the same email, and was imported instead", "li@example.com"
    ),
]
EXPORT_CSV = (
    "email,name,source,note,phone,tags,age,city,course_of_interest,newsletter\r\n"
    # A cell a spreadsheet would take for a formula (a phone's "+") starts with "'".
    "ada@example.com,Ada Lovelace,open-day,Asked about the March cohort,'+44 20 7946 0958,"
    "evening;open-day,34,Leeds,Data science,true\r\n"
)
TEMPLATE = Template(
    template_id="welcome",
    name="Welcome",
    subject="Welcome to {{school_name}}, {{first_name}}",
    body=(
        "<p>Hi {{first_name}},</p><p>Browse our courses at"
        ' <a href="{{courses_link}}">{{courses_link}}</a>, or write to {{contact_email}}.</p>'
    ),
    created_at=AT,
)
# One of an account's own: a template in the school's layout, at its second version.
LAYOUT = Template(
    template_id="letterhead",
    name="Acme Academy letterhead",
    subject="Acme Academy",
    body=(
        '<div class="page"><h1>Acme Academy</h1>{{content}}<p class="small">12 High St,'
        ' Leeds. <a href="{{unsubscribe_url}}">Unsubscribe</a></p></div>'
    ),
    created_at=AT,
    kind=TemplateKind.LAYOUT,
    account_id="acc_9Qm2Lx7Tb4Rk1Vn8Cz3PwA",
    updated_at=AT,
    inline_css=True,
)
OPEN_DAY = Template(
    template_id="open-day",
    name="Open day invitation",
    subject="{{first_name}}, come to our open day on {{date}}",
    body="<p>Hi {{first_name}},</p><p>Our doors are open on {{date}}.</p>",
    created_at=AT,
    text="Hi {{first_name}},\n\nOur doors are open on {{date}}.",
    layout_id="letterhead",
    account_id="acc_9Qm2Lx7Tb4Rk1Vn8Cz3PwA",
    version=2,
    updated_at=AT.replace(hour=11),
    inline_css=True,
)


def test_message() -> Message:
    """A template's test send, as the message log keeps it."""
    return dataclasses.replace(
        message("ada@example.com", MessageStatus.SENT, template=True),
        template_id="open-day",
        template_version=2,
        subject="Ada, come to our open day on Saturday 14 March",
        test=True,
    )


def message(
    to: str,
    status: MessageStatus,
    *,
    template: bool = False,
    number: int = 1,
    error: str = "",
    attempts: int = 1,
) -> Message:
    return Message(
        message_id=f"msg_Vb7Qw2Lr9TzK4mXc8HnP{number}A",
        account_id=ACCOUNT,
        sender=SENDER,
        to=(to,),
        subject="Welcome to Northwind Academy, Ada" if template else "Your open day place",
        template_id="welcome" if template else None,
        status=status,
        provider="resend",
        provider_message_id=(
            f"4ef9a417-02e9-4d39-ad75-9611e0fcc33{number}" if status is MessageStatus.SENT else None
        ),
        attempts=attempts,
        last_error=error,
        created_at=AT,
        updated_at=AT,
        template_version=1 if template else None,
    )


SENT = message("ada@example.com", MessageStatus.SENT)
# SENT as its provider's webhooks told of it later: delivered, then opened.
_DELIVERED_AT = AT + timedelta(seconds=4, milliseconds=210)
DELIVERED = replace(SENT, status=MessageStatus.DELIVERED, updated_at=_DELIVERED_AT)
DELIVERED_EVENTS = [
    MessageEvent(
        SENT.message_id, ACCOUNT, "resend", "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W",
        EventType.DELIVERED, None, _DELIVERED_AT, "",
    ),
    MessageEvent(
        SENT.message_id, ACCOUNT, "resend", "msg_2KWPBkYqvBFP7mMZJ4VjVaV3TOu",
        EventType.OPENED, None, AT + timedelta(minutes=12, milliseconds=37), "",
    ),
]  # fmt: skip
SENT_FROM_TEMPLATE = [
    message("ada@example.com", MessageStatus.SENT, template=True, number=1),
    message("grace@example.com", MessageStatus.SENT, template=True, number=2),
]


def failed_send(*, per_recipient: bool, unavailable: bool) -> LeadmailError:
    """A send the provider refused, or could not take in three tries."""
    cause = (
        ProviderUnavailable("no answer within 10 s")
        if unavailable
        else ProviderRejected(422, "The 'to' address is not a valid mailbox")
    )
    failed = message(
        "grace@example.com",
        MessageStatus.FAILED,
        template=per_recipient,
        number=2,
        error=cause.message,
        attempts=3 if unavailable else 1,
    )
    messages = [SENT_FROM_TEMPLATE[0], failed] if per_recipient else [failed]
    result = SendResult(messages, {failed.message_id: cause}, per_recipient=per_recipient)
    failure = result.failure
    assert failure is not None
    return failure


SUPPRESSIONS = [
    Suppression.of(ACCOUNT, "former.student@example.com", SuppressionReason.MANUAL, AT),
    Suppression.of(
        ACCOUNT,
        "grace@example.com",
        SuppressionReason.BOUNCED,
        AT - timedelta(days=1),
        message_id="msg_Vb7Qw2Lr9TzK4mXc8HnP1A",
    ),
]

# What the account holds about Ada (GDPR article 15): her lead, the message to her and
# what its provider said, her unsubscribe from a campaign, and the row of an import that
# named her again.
ADA = DataSubject.of(LEAD.email)
ADA_IMPORT_ROW = ImportRow(
    IMPORT.import_id,
    RowError(4012, "email", "row 4020 has the same email, and was imported instead", LEAD.email),
)
ADA_SUPPRESSION = Suppression.of(
    ACCOUNT,
    ADA.address,
    SuppressionReason.UNSUBSCRIBED,
    AT + timedelta(days=3),
    campaign_id="cmp_Hq7Rt2Kx9Lm4Vb8Nc3Pw6A",  # campaign_examples.CAMPAIGN
)
ADA_ERASED = Erased(
    ADA, leads=1, messages=1, events=2, campaign_recipients=1, import_errors=1, suppressions=1
)
TEST_MESSAGE = test_message()
