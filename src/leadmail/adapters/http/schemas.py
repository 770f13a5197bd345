"""What travels on the wire: msgspec Structs, and their conversion from domain types.
The envelopes around them are in envelopes.py."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import msgspec

from leadmail.adapters.http.timestamps import to_iso
from leadmail.domain.campaigns import CAMPAIGN_ID
from leadmail.domain.email import MESSAGE_ID, Message, MessageStatus
from leadmail.domain.lead_imports import IMPORT_ID
from leadmail.domain.lead_listing import LeadPage
from leadmail.domain.leads import LEAD_ID, Lead
from leadmail.domain.message_events import Bounce, EventType, MessageEvent
from leadmail.domain.templates import TEMPLATE_ID
from leadmail.services.messages import MessageLogPage

# The ids in answers, each with the domain's rule for its kind, stated in the document.
LeadId = Annotated[str, msgspec.Meta(pattern=LEAD_ID.pattern)]
MessageId = Annotated[str, msgspec.Meta(pattern=MESSAGE_ID.pattern)]
ImportId = Annotated[str, msgspec.Meta(pattern=IMPORT_ID.pattern)]
CampaignId = Annotated[str, msgspec.Meta(pattern=CAMPAIGN_ID.pattern)]
TemplateId = Annotated[str, msgspec.Meta(pattern=TEMPLATE_ID.pattern)]

# What a template needs lies in the catalog, not in this document: said in words.
VARIABLES_RULE = (
    "A value for each of the template's `variables` (GET /api/v1/email/templates), as text"
    " without NUL; a variable the subject uses takes no line break or control character."
    " Missing or unusable: 422 naming `variables.<name>`. Other keys are ignored, and so is"
    " `unsubscribe_url`: the service fills it with each recipient's own unsubscribe link."
    " At most 64 KB of names and values in all (UTF-8; more: 422 naming `variables`)."
)


# A custom field's value as sent: any JSON here, so that the domain names a bad one by its
# key (``fields.city``); rules.py states the values the document allows.
FieldsIn = dict[str, Any]
FieldValueOut = str | int | float | bool


class LeadIn(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    email: str
    source: str = ""
    note: str = ""
    phone: str = ""
    tags: list[str] = msgspec.field(default_factory=list)
    fields: FieldsIn = msgspec.field(default_factory=dict)


class LeadPatchIn(msgspec.Struct, forbid_unknown_fields=True):
    """Any subset of the client fields; omitted ones stay as they are. ``tags`` replaces
    the set; ``fields`` is merged key by key (null removes a key)."""

    name: str | msgspec.UnsetType = msgspec.UNSET
    email: str | msgspec.UnsetType = msgspec.UNSET
    source: str | msgspec.UnsetType = msgspec.UNSET
    note: str | msgspec.UnsetType = msgspec.UNSET
    phone: str | msgspec.UnsetType = msgspec.UNSET
    tags: list[str] | msgspec.UnsetType = msgspec.UNSET
    fields: FieldsIn | msgspec.UnsetType = msgspec.UNSET


class TagsIn(msgspec.Struct, forbid_unknown_fields=True):
    """Tags to add and to remove, in one step; at least one of them."""

    add: list[str] = msgspec.field(default_factory=list)
    remove: list[str] = msgspec.field(default_factory=list)


class LeadOut(msgspec.Struct):
    lead_id: LeadId
    name: str
    email: str
    source: str
    note: str
    phone: str
    tags: list[str]
    fields: dict[str, FieldValueOut]
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, lead: Lead) -> LeadOut:
        created = to_iso(lead.created_at)
        return cls(
            lead_id=lead.lead_id,
            name=lead.name,
            email=lead.email,
            source=lead.source,
            note=lead.note,
            phone=lead.phone,
            tags=list(lead.tags),
            fields=dict(lead.fields),
            created_at=created,
            # A new lead's two moments are one: format it once.
            updated_at=created if lead.updated_at == lead.created_at else to_iso(lead.updated_at),
        )


class LeadPageOut(msgspec.Struct):
    items: list[LeadOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: LeadPage) -> LeadPageOut:
        return cls(items=[LeadOut.of(lead) for lead in page.leads], next_cursor=page.next_cursor)


class CountOut(msgspec.Struct):
    count: int


class AllowedOut(msgspec.Struct):
    methods: list[str]


class DeletedOut(msgspec.Struct):
    lead_id: LeadId


def given_fields(data: msgspec.Struct) -> dict[str, Any]:
    """The fields a request set (an omitted one is UNSET), by name."""
    return {
        name: value
        for name in data.__struct_fields__
        if (value := getattr(data, name)) is not msgspec.UNSET
    }


TRANSACTIONAL_RULE = (
    "A receipt, a password reset: sent to an address that unsubscribed or that the account"
    " put on its suppression list (`manual`), never to one that bounced or complained."
)
LIST_UNSUBSCRIBE_RULE = (
    "Carry the one-click unsubscribe headers (RFC 8058: `List-Unsubscribe`,"
    " `List-Unsubscribe-Post`), each recipient's own link (`/u/{token}`). A plain send is"
    " one message, so with this flag its `to` must be one address (else 422 naming"
    " `list_unsubscribe`); a template send gives each recipient a message of their own."
)
Transactional = Annotated[bool, msgspec.Meta(description=TRANSACTIONAL_RULE)]
PLAIN_TEXT_RULE = (
    "The plain-text part, sent beside the HTML. Absent: one derived from the HTML (links as"
    ' `text (url)`); `""`: none, HTML only. At most 512 KB (UTF-8)'
)
HTML_RULE = "The HTML body: at most 512 KB (UTF-8; more: 422 naming `html`)"
ListUnsubscribe = Annotated[bool, msgspec.Meta(description=LIST_UNSUBSCRIBE_RULE)]


class SendEmailIn(msgspec.Struct, forbid_unknown_fields=True):
    to: str | list[str]
    subject: str
    html: Annotated[str, msgspec.Meta(description=HTML_RULE)]
    sender: str | None = msgspec.field(default=None, name="from")
    transactional: Transactional = False
    list_unsubscribe: ListUnsubscribe = False
    text: Annotated[str | None, msgspec.Meta(description=PLAIN_TEXT_RULE)] = None
    reply_to: str | None = None


class SendTemplateIn(msgspec.Struct, forbid_unknown_fields=True):
    to: str | list[str]
    template_id: str
    variables: Annotated[dict[str, str], msgspec.Meta(description=VARIABLES_RULE)] = msgspec.field(
        default_factory=dict
    )
    sender: str | None = msgspec.field(default=None, name="from")
    transactional: Transactional = False
    list_unsubscribe: ListUnsubscribe = False
    reply_to: str | None = None


class MessageEventOut(msgspec.Struct):
    """What the provider reported of the message (its webhooks); ``bounce`` for a bounce."""

    type: EventType
    bounce: Bounce | None
    at: str
    detail: str

    @classmethod
    def of(cls, event: MessageEvent) -> MessageEventOut:
        return cls(event.type, event.bounce, to_iso(event.at), event.detail)


class MessageOut(msgspec.Struct):
    id: MessageId
    status: MessageStatus
    provider: str
    provider_message_id: str | None
    to: list[str]
    sender: str = msgspec.field(name="from")
    subject: str
    template_id: TemplateId | None
    template_version: Annotated[
        int | None,
        msgspec.Meta(
            description="The version of the template it was made from (GET .../versions/{n})"
        ),
    ]
    test: Annotated[bool, msgspec.Meta(description="A template's test send")]
    campaign_id: CampaignId | None  # the campaign it was sent for
    attempts: int
    last_error: str
    created_at: str
    updated_at: str
    # The provider's events since, oldest first (GET /api/v1/email/messages/{id}; a send's
    # answer has none yet).
    events: list[MessageEventOut]

    @classmethod
    def of(cls, message: Message, events: Sequence[MessageEvent] = ()) -> MessageOut:
        return cls(
            id=message.message_id,
            status=message.status,
            provider=message.provider,
            provider_message_id=message.provider_message_id,
            to=list(message.to),
            sender=message.sender,
            subject=message.subject,
            template_id=message.template_id,
            template_version=message.template_version,
            test=message.test,
            campaign_id=message.campaign_id,
            attempts=message.attempts,
            last_error=message.last_error,
            created_at=to_iso(message.created_at),
            updated_at=to_iso(message.updated_at),
            events=[MessageEventOut.of(e) for e in events],
        )


class MessagesOut(msgspec.Struct):
    messages: list[MessageOut]


class MessagePageOut(msgspec.Struct):
    """A page of the message log, newest first; ``next_cursor`` null on the last page."""

    items: list[MessageOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: MessageLogPage) -> MessagePageOut:
        return cls([MessageOut.of(m, events) for m, events in page.items], page.next_cursor)
