"""The envelope every response travels in: ``{success, message, error, data}`` (and
``code`` on failures), one concrete class per payload, so the OpenAPI document names
each one and types its ``data``."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

import msgspec

from leadmail.adapters.http.action_schemas import LeadActionCountOut, LeadActionOut
from leadmail.adapters.http.campaign_schemas import CampaignOut, CampaignPageOut, RecipientPageOut
from leadmail.adapters.http.import_schemas import ImportErrorPageOut, ImportOut, ImportPageOut
from leadmail.adapters.http.privacy_schemas import ErasedOut, PersonalDataOut
from leadmail.adapters.http.schemas import (
    AllowedOut,
    CampaignId,
    CountOut,
    DeletedOut,
    LeadId,
    LeadOut,
    LeadPageOut,
    MessageOut,
    MessagePageOut,
    MessagesOut,
    TemplateId,
)
from leadmail.adapters.http.suppression_schemas import (
    RemovedOut,
    SuppressionOut,
    SuppressionPageOut,
)
from leadmail.adapters.http.template_schemas import PreviewOut, TemplateOut, TemplateVersionsOut
from leadmail.adapters.http.timeline_schemas import TimelineOut
from leadmail.adapters.http.tracing import REQUEST_ID

# Success: HTTP 200, ``success: true``, ``error: ""``.


class Ok(msgspec.Struct):
    success: bool
    message: str
    error: str

    @classmethod
    def of(cls, message: str, data: Any) -> Self:
        return cls(True, message, "", data)  # type: ignore[call-arg]  # data: the subclass's


class LeadEnvelope(Ok):
    data: LeadOut


class LeadPageEnvelope(Ok):
    data: LeadPageOut


class LeadCountEnvelope(Ok):
    data: CountOut


class DeletedLeadEnvelope(Ok):
    data: DeletedOut


class MessageEnvelope(Ok):
    data: MessageOut


class MessageListEnvelope(Ok):
    data: MessagesOut


class MessagePageEnvelope(Ok):
    data: MessagePageOut


class TimelineEnvelope(Ok):
    data: TimelineOut


class TemplateListEnvelope(Ok):
    data: list[TemplateOut]


class TemplateEnvelope(Ok):
    data: TemplateOut


class TemplateVersionsEnvelope(Ok):
    data: TemplateVersionsOut


class PreviewEnvelope(Ok):
    data: PreviewOut


class DeletedTemplateOut(msgspec.Struct):
    id: TemplateId


class DeletedTemplateEnvelope(Ok):
    data: DeletedTemplateOut


class AllowedEnvelope(Ok):
    data: AllowedOut


# Failure: a non-200 status, ``success: false``, a human ``error`` and a stable ``code``.


class FieldErrorOut(msgspec.Struct):
    field: str
    message: str


class ValidationErrors(msgspec.Struct):
    errors: list[FieldErrorOut]


class ExistingLead(msgspec.Struct):
    lead_id: LeadId


class RequestId(msgspec.Struct):
    request_id: Annotated[str, msgspec.Meta(pattern=REQUEST_ID.pattern)]


class Failure(msgspec.Struct, omit_defaults=True):
    """What the error handlers answer with. ``data``, where a kind of failure has any, is
    one of the structs above (or a message, or the messages, of a failed send); the
    classes below document each shape."""

    success: bool
    message: str
    error: str
    code: str
    data: Any = None


class _Failed(msgspec.Struct):
    success: bool
    message: str
    error: str


class ErrorEnvelope(_Failed):
    """A failure with nothing more to say than its code and text."""

    code: str


class ValidationErrorEnvelope(_Failed):
    code: Literal["VALIDATION_FAILED"]
    data: ValidationErrors


class RefusedEnvelope(_Failed):
    """A 422 that is either VALIDATION_FAILED (``data.errors``) or a refusal with nothing
    more to say than its code (AUDIENCE_EMPTY: no ``data``)."""

    code: str
    data: ValidationErrors | msgspec.UnsetType = msgspec.UNSET


class LeadExistsEnvelope(_Failed):
    code: Literal["LEAD_EXISTS"]
    data: ExistingLead


class QuotaOut(msgspec.Struct):
    """The account's daily quota, and when it resets (the next UTC day's start)."""

    quota: int
    reset_at: str


class QuotaExceededEnvelope(_Failed):
    code: Literal["QUOTA_EXCEEDED"]
    data: QuotaOut


class TooManyEnvelope(_Failed):
    """A 429 that is either RATE_LIMITED (no ``data``) or QUOTA_EXCEEDED (``data``: the
    quota and its reset)."""

    code: str
    data: QuotaOut | msgspec.UnsetType = msgspec.UNSET


class InternalErrorEnvelope(_Failed):
    code: Literal["INTERNAL_ERROR"]
    data: RequestId


class SendRejectedEnvelope(_Failed):
    """A plain send the provider refused (502): ``data`` is the message as it stands."""

    code: Literal["PROVIDER_REJECTED"]
    data: MessageOut


class SendUnavailableEnvelope(_Failed):
    """A plain send that could not be made (503): ``data`` is the message as it stands
    when the provider was unreachable, absent when the database was."""

    code: str
    data: MessageOut | msgspec.UnsetType = msgspec.UNSET


class TemplateSendRejectedEnvelope(_Failed):
    """A template send the provider refused (502): ``data.messages`` has every
    recipient's message."""

    code: Literal["PROVIDER_REJECTED"]
    data: MessagesOut


class TemplateSendUnavailableEnvelope(_Failed):
    """A template send that could not be made (503): ``data.messages`` when the provider
    was unreachable, absent when the database was."""

    code: str
    data: MessagesOut | msgspec.UnsetType = msgspec.UNSET


class ImportEnvelope(Ok):
    data: ImportOut


class LeadActionEnvelope(Ok):
    data: LeadActionOut


class LeadActionCountEnvelope(Ok):
    data: LeadActionCountOut


class ImportPageEnvelope(Ok):
    data: ImportPageOut


class ImportErrorPageEnvelope(Ok):
    data: ImportErrorPageOut


class CampaignEnvelope(Ok):
    data: CampaignOut


class DeletedCampaignOut(msgspec.Struct):
    id: CampaignId


class DeletedCampaignEnvelope(Ok):
    data: DeletedCampaignOut


class CampaignPageEnvelope(Ok):
    data: CampaignPageOut


class RecipientPageEnvelope(Ok):
    data: RecipientPageOut


class SuppressionEnvelope(Ok):
    data: SuppressionOut


class SuppressionPageEnvelope(Ok):
    data: SuppressionPageOut


class SuppressionRemovedEnvelope(Ok):
    data: RemovedOut


class PersonalDataEnvelope(Ok):
    data: PersonalDataOut


class ErasedEnvelope(Ok):
    data: ErasedOut
