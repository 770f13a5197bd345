"""OpenAPI: the Bearer scheme, and the document Litestar builds finished: plain component
names, the rules and examples of bodies and parameters, closed lists, and the response
headers every answer carries. Each operation's errors: operation_errors.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import (
    Components,
    Example,
    OpenAPI,
    OpenAPIHeader,
    OpenAPIResponse,
    Parameter,
    Reference,
    Schema,
    SecurityScheme,
)
from litestar.openapi.spec.enums import OpenAPIFormat, OpenAPIType

from leadmail.adapters.http import (
    action_schemas,
    campaign_schemas,
    envelopes,
    examples,
    privacy_schemas,
    request_examples,
    schemas,
    suppression_schemas,
    template_schemas,
    timeline_schemas,
)
from leadmail.adapters.http.action_rules import state_action_rules
from leadmail.adapters.http.campaign_rules import state_campaign_rules
from leadmail.adapters.http.docs import docs_plugins
from leadmail.adapters.http.envelopes import (
    ErrorEnvelope,
)
from leadmail.adapters.http.error_table import (
    METHOD_NOT_ALLOWED,
)
from leadmail.adapters.http.file_docs import state_file_operation
from leadmail.adapters.http.parameter_rules import state_parameter_rules
from leadmail.adapters.http.rules import state_rules

DOCUMENT = "/schema"  # the document and its pages: no key needed, no query check

# Component names: the wire classes' names without their In/Out suffixes.
COMPONENT_NAMES = {
    schemas.LeadIn: "NewLead",
    schemas.LeadPatchIn: "LeadChanges",
    schemas.LeadOut: "Lead",
    schemas.LeadPageOut: "LeadPage",
    schemas.DeletedOut: "DeletedLead",
    schemas.TagsIn: "TagChange",
    schemas.CountOut: "LeadCount",
    schemas.SendEmailIn: "SendEmailRequest",
    schemas.SendTemplateIn: "SendTemplateEmailRequest",
    schemas.MessageOut: "Message",
    schemas.MessagesOut: "MessageList",
    timeline_schemas.TimelineOut: "LeadTimeline",
    timeline_schemas.TimelineEntryOut: "TimelineEntry",
    template_schemas.TemplateOut: "Template",
    template_schemas.TemplateIn: "TemplateInput",
    template_schemas.TemplateChangeIn: "TemplateChange",
    template_schemas.TemplateVersionsOut: "TemplateVersions",
    template_schemas.PreviewIn: "TemplatePreviewRequest",
    template_schemas.PreviewOut: "TemplatePreview",
    template_schemas.TestSendIn: "TemplateTestRequest",
    envelopes.DeletedTemplateOut: "DeletedTemplate",
    envelopes.FieldErrorOut: "FieldError",
    campaign_schemas.CampaignIn: "NewCampaign",
    campaign_schemas.CampaignChangeIn: "CampaignChange",
    envelopes.DeletedCampaignOut: "DeletedCampaign",
    campaign_schemas.CampaignOut: "Campaign",
    campaign_schemas.CampaignPageOut: "CampaignPage",
    campaign_schemas.CountsOut: "CampaignCounts",
    campaign_schemas.RecipientOut: "CampaignRecipient",
    campaign_schemas.RecipientPageOut: "CampaignRecipientPage",
    suppression_schemas.SuppressionIn: "NewSuppression",
    suppression_schemas.SuppressionOut: "Suppression",
    suppression_schemas.SuppressionPageOut: "SuppressionPage",
    suppression_schemas.RemovedOut: "RemovedSuppression",
    privacy_schemas.EraseIn: "ErasureRequest",
    privacy_schemas.ErasedOut: "Erasure",
    privacy_schemas.PersonalDataOut: "PersonalData",
    privacy_schemas.PrivacyRecipientOut: "PersonalDataRecipient",
    privacy_schemas.PrivacyImportRowOut: "PersonalDataImportRow",
    action_schemas.LeadActionIn: "LeadActionRequest",
    action_schemas.LeadActionOut: "LeadAction",
    action_schemas.LeadActionCountOut: "LeadActionCount",
}

REQUEST_BODIES = (
    schemas.LeadIn,
    schemas.LeadPatchIn,
    schemas.TagsIn,
    schemas.SendEmailIn,
    schemas.SendTemplateIn,
    campaign_schemas.CampaignIn,
    campaign_schemas.CampaignChangeIn,
    suppression_schemas.SuppressionIn,
    privacy_schemas.EraseIn,
    template_schemas.TemplateIn,
    template_schemas.TemplateChangeIn,
    template_schemas.PreviewIn,
    template_schemas.TestSendIn,
)

_HEADER_TEXT = {
    "X-Request-ID": "This request's id: the one sent, if sane, else a new one; logged",
    "Retry-After": "Seconds to wait before trying again",
    "WWW-Authenticate": 'The scheme to authenticate with: `Bearer realm="leadmail"`',
    "Idempotent-Replayed": "`true` when the answer replays an earlier request's result",
    "Allow": "The methods the path takes, comma-separated",
    "RateLimit-Limit": "The API key's budget: requests a minute (absent when there is none)",
    "RateLimit-Remaining": "Requests left in the budget's window now",
    "RateLimit-Reset": "Seconds until a place in the budget frees",
}
_BUDGET = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]


def finish(
    document: OpenAPI,
    replayable: Iterable[str],
    *,
    sender_required: bool,
    providers: Sequence[str] = (),
) -> None:
    """Plain component names, and the headers each response carries: ``X-Request-ID`` on
    all, ``RateLimit-*`` on all but 401, ``Retry-After`` on 429 and 503,
    ``WWW-Authenticate`` on 401, ``Idempotent-Replayed`` on the success of the operations
    in ``replayable`` (their operation ids)."""
    renames = {cls.__name__: name for cls, name in COMPONENT_NAMES.items()}
    schemas_ = document.components.schemas
    state_rules(schemas_, sender_required=sender_required)
    state_campaign_rules(schemas_, sender_required=sender_required)
    state_action_rules(schemas_)
    message = schemas_.get(schemas.MessageOut.__name__)
    if providers and isinstance(message, Schema) and message.properties:
        provider = message.properties["provider"]
        if isinstance(provider, Schema):
            provider.enum = list(providers)
    for cls in REQUEST_BODIES:  # msgspec refuses unknown fields; say so
        body = schemas_.get(cls.__name__)
        if isinstance(body, Schema):
            body.additional_properties = False
            if cls in (
                schemas.LeadPatchIn,
                template_schemas.TemplateChangeIn,
                campaign_schemas.CampaignChangeIn,
            ):
                # an update must change something
                body.min_properties = 1
    document.components.schemas = {renames.get(k, k): v for k, v in schemas_.items()}
    document.components.responses = {
        **(document.components.responses or {}),
        "MethodNotAllowed": _method_not_allowed(),
    }
    for name, schema in document.components.schemas.items():
        if isinstance(schema, Schema):
            schema.title = name  # generated clients name their models by the title
            for field, prop in (schema.properties or {}).items():
                if field.endswith("_at") and isinstance(prop, Schema):
                    prop.format = OpenAPIFormat.DATE_TIME  # to_iso: RFC 3339, UTC
    _rename_references(document, {f"#/components/schemas/{k}": v for k, v in renames.items()})
    requests = {
        f"#/components/schemas/{renames.get(cls.__name__, cls.__name__)}": example
        for cls, example in request_examples.REQUESTS.items()
    }
    replayed = set(replayable)
    for path in (document.paths or {}).values():
        for operation in (path.get, path.put, path.post, path.delete):
            if operation is None or not operation.responses:
                continue
            state_file_operation(operation)
            examples.state_examples(operation, requests)
            for parameter in operation.parameters or ():
                if isinstance(parameter, Parameter) and not parameter.required:
                    parameter.schema = _not_null(parameter.schema)
                if isinstance(parameter, Parameter):
                    state_parameter_rules(parameter, operation.operation_id)
            # Litestar documents its own 400 for an operation with parameters; that shape
            # is never answered (errors.py turns it into an envelope, declared or not).
            operation.responses = {
                status: response
                for status, response in operation.responses.items()
                if status.startswith("2") or _ours(response)
            }
            for status, response in operation.responses.items():
                if not isinstance(response, OpenAPIResponse):
                    continue
                for media in (response.content or {}).values():
                    for example in (media.examples or {}).values():
                        if isinstance(example, Example):
                            example.id = None  # it named the example; no field of OpenAPI's
                names = ["X-Request-ID"]
                names += {"503": ["Retry-After"], "401": ["WWW-Authenticate"]}.get(status, [])
                if status != "401":  # charged once the key is known (budgets.py)
                    names += _BUDGET + (["Retry-After"] if status == "429" else [])
                if status == "200" and operation.operation_id in replayed:
                    names.append("Idempotent-Replayed")
                response.headers = {
                    **(response.headers or {}),
                    **{name: _header(name) for name in names},
                }


def _method_not_allowed() -> OpenAPIResponse:
    """What any path answers to a method it does not take (no operation has it)."""
    return OpenAPIResponse(
        description=(
            f"`{METHOD_NOT_ALLOWED.code}`: {METHOD_NOT_ALLOWED.when}. Any path answers it to"
            " a method it does not take; `Allow` lists those it does."
        ),
        headers={"Allow": _header("Allow"), "X-Request-ID": _header("X-Request-ID")},
        content={
            "application/json": examples.VerbatimExampleMedia(
                schema=Reference(ref=f"#/components/schemas/{ErrorEnvelope.__name__}"),
                example=examples.failure(METHOD_NOT_ALLOWED, None),
            )
        },
    )


def _not_null(schema: Schema | Reference | None) -> Schema | Reference | None:
    """An optional parameter is omitted, never sent as null: ``T | None`` is documented as
    ``T`` (a generated client then takes a string, not None)."""
    if isinstance(schema, Schema) and isinstance(schema.type, list):  # a closed list | None
        kinds = [kind for kind in schema.type if kind != OpenAPIType.NULL]
        schema.type = kinds[0] if len(kinds) == 1 else kinds
        if schema.enum is not None:
            schema.enum = [value for value in schema.enum if value is not None]
        return schema
    if not isinstance(schema, Schema) or not schema.one_of:
        return schema
    kept = [s for s in schema.one_of if not (isinstance(s, Schema) and s.type == OpenAPIType.NULL)]
    if len(kept) != 1:
        return schema
    return kept[0]


def _ours(response: OpenAPIResponse | Reference) -> bool:
    """A response whose body is one of this document's components (an envelope)."""
    if not isinstance(response, OpenAPIResponse) or not response.content:
        return False
    return all(isinstance(media.schema, Reference) for media in response.content.values())


def _header(name: str) -> OpenAPIHeader:
    numbers = ("Retry-After", *_BUDGET)
    kind = OpenAPIType.INTEGER if name in numbers else OpenAPIType.STRING
    return OpenAPIHeader(schema=Schema(type=kind), description=_HEADER_TEXT[name])


def _rename_references(node: Any, renames: dict[str, str]) -> None:
    """Point every ``$ref`` at a component's new name."""
    if isinstance(node, Reference):
        if node.ref in renames:
            node.ref = "#/components/schemas/" + renames[node.ref]
    elif isinstance(node, dict):
        for value in node.values():
            _rename_references(value, renames)
    elif isinstance(node, list | tuple):
        for value in node:
            _rename_references(value, renames)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for field in dataclasses.fields(node):
            _rename_references(getattr(node, field.name), renames)


def openapi_config(version: str) -> OpenAPIConfig:
    return OpenAPIConfig(
        title="leadmail",
        version=version,
        description=(
            "Email and leads for course businesses. Every call needs "
            "`Authorization: Bearer <API_KEY>`; every response is the envelope "
            "`{success, message, error, data}`, with a stable `code` on failures."
        ),
        path=DOCUMENT,
        render_plugins=docs_plugins(DOCUMENT),
        components=Components(
            security_schemes={
                "BearerAuth": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="An API key from `leadmail keys create`",
                )
            }
        ),
        security=[{"BearerAuth": []}],
        use_handler_docstrings=False,
    )
