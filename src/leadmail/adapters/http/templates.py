"""/api/v1/email/templates: the templates an account can send. The predefined ones (the
service's catalog) are read-only; the account's own are written here, each change a new
version (services/templates.py). The list itself is EmailController's (with its alias)."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Request, Response, delete, get, post, put
from litestar.params import JSONBody, Parameter, PathParameter

from leadmail.adapters.http.answers import sent_message
from leadmail.adapters.http.discovery import DiscoverableController, options_for
from leadmail.adapters.http.envelopes import (
    DeletedTemplateEnvelope,
    DeletedTemplateOut,
    MessageListEnvelope,
    PreviewEnvelope,
    TemplateEnvelope,
    TemplateListEnvelope,
    TemplateSendRejectedEnvelope,
    TemplateSendUnavailableEnvelope,
    TemplateVersionsEnvelope,
)
from leadmail.adapters.http.flags import check_flags
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.paging import Limit
from leadmail.adapters.http.parameter_rules import VERSION_CURSOR
from leadmail.adapters.http.path_ids import TemplateIdPath
from leadmail.adapters.http.prepared import PreparedOnce
from leadmail.adapters.http.schemas import MessageOut, MessagesOut
from leadmail.adapters.http.template_schemas import (
    PreviewIn,
    PreviewOut,
    TemplateChangeIn,
    TemplateIn,
    TemplateOut,
    TemplateVersionsOut,
    TestSendIn,
)
from leadmail.domain.email import SenderNotAllowed
from leadmail.domain.errors import FieldError, LeadNotFound, TemplateNotFound, ValidationFailed
from leadmail.domain.keys import Principal
from leadmail.domain.lead_listing import DEFAULT_PAGE_SIZE
from leadmail.domain.quotas import QuotaExceeded
from leadmail.domain.template_drafts import (
    MAX_TEMPLATES,
    TemplateExists,
    TemplateInUse,
    TemplateReadOnly,
)
from leadmail.services.results import DeliveryRejected, DeliveryUnavailable
from leadmail.services.template_authoring import TemplateAuthoring
from leadmail.services.template_trials import TemplateTrials
from leadmail.services.templates import TemplateService, TemplateView

AuthedRequest = Request[Principal, Any, Any]
Version = Annotated[
    str, PathParameter(pattern=VERSION_CURSOR, description="A version number (1, 2, ...)")
]
LIST_TEXT = (
    "The predefined templates (the service's catalog, `owner: predefined`, read-only), then"
    " your own (`owner: account`: templates and layouts), each in id order."
)
PREVIEW_TEXT = (
    "Renders the template (its current version, or `version`) exactly as a send would: in"
    " its layout, CSS inlined, with its plain-text part, filled with `variables` and, over"
    " them, the values of the lead `lead_id` names (as a campaign fills them). A variable"
    " with no value is listed in `missing` and shown as `{{name}}` instead of failing."
    " Nothing is stored or sent."
)
TEST_TEXT = (
    "Sends the template's current version to one address, filled as a preview is (a"
    " variable with no value shows as `{{name}}`), through every rule of a normal send (the"
    " suppression list, the sender rules). The message is logged with `test: true`."
)
# A test send fails as a template send does (its data: every message's outcome).
_SENDS = (TemplateSendRejectedEnvelope, TemplateSendUnavailableEnvelope)
CREATE_TEXT = (
    "Stores a template of your own (version 1): `{{name}}` placeholders as in the predefined"
    " ones; `kind: layout` makes a layout, which holds `{{content}}` once and wraps the"
    " templates that name it in `layout_id`. Every broken rule is a 422 naming its field (and,"
    " in template text, the line and column). `id` is made from the name when absent. An"
    f" account holds at most {MAX_TEMPLATES} templates."
)
CHANGE_TEXT = (
    "Changes any of `name`, `subject`, `html`, `text`, `layout_id`, `inline_css` (omitted"
    " ones stay; `text` or `layout_id` null removes it) and stores the next version. A"
    " campaign that has started keeps the version it started with. Predefined templates are"
    " read-only (403)."
)
DELETE_TEXT = (
    "Deletes one of your templates and its versions. A template that a campaign which has"
    " not finished (draft, scheduled, running, paused) uses, or a layout that templates name,"
    " is 409 `TEMPLATE_IN_USE` naming them. Predefined templates are read-only (403)."
)


class TemplateController(DiscoverableController):
    path = "/api/v1/email/templates"
    tags = ["email"]  # under /api/v1/email, as the list of templates always was
    templates: ClassVar[TemplateService]
    authoring: ClassVar[TemplateAuthoring]
    trials: ClassVar[TemplateTrials]

    # First: they replace Litestar's automatic OPTIONS (see discovery.py).
    collection_options = options_for("/", "GET", "POST")
    item_options = options_for("/{template_id:str}", "GET", "PUT", "DELETE")
    versions_options = options_for("/{template_id:str}/versions", "GET")
    version_options = options_for("/{template_id:str}/versions/{version:str}", "GET")
    preview_options = options_for("/{template_id:str}/preview", "POST")
    test_options = options_for("/{template_id:str}/test", "POST")

    @get(
        "/",
        summary="List the email templates",
        description=LIST_TEXT,
        operation_id="listTemplates",
        responses=error_responses(),
    )
    async def list_templates(self, request: AuthedRequest) -> Response[TemplateListEnvelope]:
        return await template_list(self.templates, request.user.account_id)

    @post(
        "/",
        status_code=201,
        summary="Create a template of your own",
        description=CREATE_TEXT,
        operation_id="createTemplate",
        responses=error_responses(ValidationFailed, TemplateExists, body=True),
    )
    async def create_template(
        self, request: AuthedRequest, data: JSONBody[TemplateIn]
    ) -> TemplateEnvelope:
        await check_flags(request, "inline_css")
        view = await self.authoring.create(request.user.account_id, data.draft(), data.id)
        return TemplateEnvelope.of("Template created", TemplateOut.of(view))

    @get(
        "/{template_id:str}",
        summary="Get a template",
        operation_id="getTemplate",
        responses=error_responses(TemplateNotFound),
    )
    async def get_template(
        self, request: AuthedRequest, template_id: TemplateIdPath
    ) -> TemplateEnvelope:
        view = await self.templates.view(request.user.account_id, template_id)
        return TemplateEnvelope.of("Template retrieved", TemplateOut.of(view))

    @put(
        "/{template_id:str}",
        summary="Change a template of your own (a new version)",
        description=CHANGE_TEXT,
        operation_id="updateTemplate",
        responses=error_responses(ValidationFailed, TemplateNotFound, TemplateReadOnly, body=True),
    )
    async def update_template(
        self, request: AuthedRequest, template_id: TemplateIdPath, data: JSONBody[TemplateChangeIn]
    ) -> TemplateEnvelope:
        await check_flags(request, "inline_css")
        view = await self.authoring.change(request.user.account_id, template_id, data.change())
        return TemplateEnvelope.of("Template updated", TemplateOut.of(view))

    @delete(
        "/{template_id:str}",
        status_code=200,
        summary="Delete a template of your own",
        description=DELETE_TEXT,
        operation_id="deleteTemplate",
        responses=error_responses(TemplateNotFound, TemplateReadOnly, TemplateInUse),
    )
    async def delete_template(
        self, request: AuthedRequest, template_id: TemplateIdPath
    ) -> DeletedTemplateEnvelope:
        await self.authoring.delete(request.user.account_id, template_id)
        return DeletedTemplateEnvelope.of("Template deleted", DeletedTemplateOut(id=template_id))

    @get(
        "/{template_id:str}/versions",
        summary="List a template's versions, newest first",
        description="Cursor pagination: pass `next_cursor` back as `cursor`. `limit` is 1-100.",
        operation_id="listTemplateVersions",
        responses=error_responses(ValidationFailed, TemplateNotFound),
    )
    async def list_template_versions(
        self,
        request: AuthedRequest,
        template_id: TemplateIdPath,
        limit: Limit = DEFAULT_PAGE_SIZE,
        cursor: Annotated[
            str | None,
            Parameter(description="`next_cursor` of the previous page, as it came"),
        ] = None,
    ) -> TemplateVersionsEnvelope:
        before = _cursor(cursor)
        views = await self.templates.version_views(
            request.user.account_id, template_id, limit + 1, before
        )
        page, more = views[:limit], len(views) > limit
        next_cursor = str(page[-1].template.version) if more and page else None
        return TemplateVersionsEnvelope.of(
            "Template versions retrieved",
            TemplateVersionsOut([TemplateOut.of(v) for v in page], next_cursor),
        )

    @get(
        "/{template_id:str}/versions/{version:str}",
        summary="Get one version of a template",
        operation_id="getTemplateVersion",
        responses=error_responses(ValidationFailed, TemplateNotFound),
    )
    async def get_template_version(
        self, request: AuthedRequest, template_id: TemplateIdPath, version: Version
    ) -> TemplateEnvelope:
        account = request.user.account_id
        found = await self.templates.version(account, template_id, int(version))
        view = await self.templates.view_of(account, found)
        return TemplateEnvelope.of("Template version retrieved", TemplateOut.of(view))

    @post(
        "/{template_id:str}/preview",
        status_code=200,
        summary="Preview a template as a send would render it",
        description=PREVIEW_TEXT,
        operation_id="previewTemplate",
        responses=error_responses(ValidationFailed, TemplateNotFound, LeadNotFound, body=True),
    )
    async def preview_template(
        self, request: AuthedRequest, template_id: TemplateIdPath, data: JSONBody[PreviewIn]
    ) -> PreviewEnvelope:
        preview = await self.trials.preview(
            request.user.account_id, template_id, data.variables, data.lead_id, data.version
        )
        return PreviewEnvelope.of("Template previewed", PreviewOut.of(preview))

    @post(
        "/{template_id:str}/test",
        status_code=200,
        summary="Send a template to one address as a test",
        description=TEST_TEXT,
        operation_id="testTemplate",
        responses=error_responses(
            ValidationFailed,
            SenderNotAllowed,
            TemplateNotFound,
            LeadNotFound,
            QuotaExceeded,
            DeliveryRejected,
            DeliveryUnavailable,
            body=True,
            sends=_SENDS,
        ),
    )
    async def test_template(
        self, request: AuthedRequest, template_id: TemplateIdPath, data: JSONBody[TestSendIn]
    ) -> Response[MessageListEnvelope]:
        result = await self.trials.test(
            request.user.account_id, template_id, data.to, data.variables, data.lead_id,
            data.sender,
        )  # fmt: skip
        messages = MessagesOut([MessageOut.of(m) for m in result.messages])
        return Response(MessageListEnvelope.of(sent_message(result), messages))


# TemplateService.predefined hands back the same list until the catalog is synced: for an
# account with no template of its own, the answer is encoded once per change of the catalog.
_PREDEFINED_LIST = PreparedOnce()


async def template_list(
    templates: TemplateService, account_id: str
) -> Response[TemplateListEnvelope]:
    """The answer of listTemplates (and of its alias, EmailController's)."""
    predefined = await templates.predefined()
    own = await templates.own(account_id)
    if not own:  # the answer goes out as it was prepared (the schema: the annotation)
        return _PREDEFINED_LIST.of(
            predefined,
            lambda: msgspec.json.encode(
                TemplateListEnvelope.of(
                    "Templates retrieved",
                    [TemplateOut.of(TemplateView.of(t, None)) for t in predefined],
                )
            ),
        )
    views = [TemplateView.of(t, None) for t in predefined] + own
    return Response(
        TemplateListEnvelope.of("Templates retrieved", [TemplateOut.of(v) for v in views])
    )


def _cursor(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    if re.fullmatch(VERSION_CURSOR, cursor) is None:
        raise ValidationFailed([FieldError("cursor", "is not a cursor this service gave")])
    return int(cursor)
