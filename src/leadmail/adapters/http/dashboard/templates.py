"""Templates: the predefined ones and the account's own; a new one, and a change (each the
next version); a preview rendered as a send renders it (sample values, or a chosen lead's),
shown in a sandboxed frame that runs no script; the versions; a test sent to oneself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.params import FromPath
from litestar.response import Redirect, Template

from leadmail.adapters.http.dashboard.pages import (
    field_errors,
    form_values,
    key_values,
    page,
    see_other,
)
from leadmail.adapters.http.dashboard.security import DASHBOARD, session_of
from leadmail.domain.email import SenderNotAllowed
from leadmail.domain.errors import LeadNotFound, ValidationFailed
from leadmail.domain.suppressions import RecipientSuppressed
from leadmail.domain.template_drafts import TemplateDraft, TemplateExists, TemplateReadOnly
from leadmail.domain.templates import TemplateKind
from leadmail.services.results import DeliveryFailed
from leadmail.services.template_authoring import TemplateAuthoring, TemplateChange
from leadmail.services.template_trials import TemplateTrials
from leadmail.services.templates import TemplateService

AnyRequest = Request[Any, Any, Any]
TEMPLATES = f"{DASHBOARD}/templates"
VERSIONS_SHOWN = 20
FORM = ("name", "subject", "html", "text", "layout_id")
# The preview is the one page framed, by the dashboard only; what it shows is an email's
# HTML: its own styles (inline, as mail clients take them) and images, never a script.
PREVIEW_HEADERS = [
    ResponseHeader(
        name="content-security-policy",
        value="default-src 'none'; style-src 'unsafe-inline'; img-src data: https:;"
        " font-src data: https:; frame-ancestors 'self'; sandbox",
    ),
    ResponseHeader(name="x-frame-options", value="SAMEORIGIN"),
]
NOTICES = {"created": "Template created.", "updated": "Saved: a new version."}


def _sample(query: Mapping[str, Any]) -> tuple[dict[str, str], str | None, str]:
    """The preview's sample values and lead, as the template page's form sent them."""
    text = str(query.get("values", "") or "")
    lead = str(query.get("lead_id", "") or "").strip() or None
    return key_values(text), lead, text


class TemplatePages(Controller):
    path = "/templates"
    include_in_schema = False
    templates: ClassVar[TemplateService]
    authoring: ClassVar[TemplateAuthoring]
    trials: ClassVar[TemplateTrials]

    @get("/")
    async def listing(self, request: AnyRequest) -> Template:
        account = session_of(request).user.account_id
        every = await self.templates.list(account)
        return page(
            request,
            "templates.html",
            "templates",
            "Templates",
            predefined=[t for t in every if t.predefined],
            own=[t for t in every if not t.predefined],
        )

    @get("/new")
    async def new(self, request: AnyRequest) -> Template:
        return await self._form(request, dict.fromkeys(FORM, ""), {})

    @post("/")
    async def create(self, request: AnyRequest) -> Template | Redirect:
        account = session_of(request).user.account_id
        values = form_values(await request.form(), *FORM, "kind")
        kind = TemplateKind.LAYOUT if values["kind"] == "layout" else TemplateKind.TEMPLATE
        draft = TemplateDraft(
            name=values["name"],
            subject=values["subject"],
            html=values["html"],
            text=values["text"] or None,
            layout_id=values["layout_id"] or None,
            kind=kind,
        )
        try:
            view = await self.authoring.create(account, draft)
        except ValidationFailed as e:
            return await self._form(request, values, field_errors(e))
        except TemplateExists as e:
            return await self._form(request, values, {"name": e.message})
        return see_other(f"{TEMPLATES}/{view.template.template_id}", said="created")

    @get("/{template_id:str}")
    async def template(self, request: AnyRequest, template_id: FromPath[str]) -> Template:
        return await self._page(request, template_id, {}, "")

    @post("/{template_id:str}")
    async def change(self, request: AnyRequest, template_id: FromPath[str]) -> Template | Redirect:
        account = session_of(request).user.account_id
        values = form_values(await request.form(), *FORM)
        change = TemplateChange(
            name=values["name"],
            subject=values["subject"],
            html=values["html"],
            text=values["text"] or None,
            layout_id=values["layout_id"] or None,
            clear=frozenset(k for k in ("text", "layout_id") if not values[k]),
        )
        try:
            await self.authoring.change(account, template_id, change)
        except ValidationFailed as e:
            return await self._page(request, template_id, field_errors(e), "", values)
        except TemplateReadOnly as e:
            return await self._page(request, template_id, {"name": e.message}, "", values)
        return see_other(f"{TEMPLATES}/{template_id}", said="updated")

    @get("/{template_id:str}/preview", response_headers=PREVIEW_HEADERS)
    async def preview(self, request: AnyRequest, template_id: FromPath[str]) -> Response[str]:
        account = session_of(request).user.account_id
        variables, lead_id, _ = _sample(request.query_params)
        version = request.query_params.get("version")
        shown = await self.trials.preview(
            account,
            template_id,
            variables,
            lead_id,
            int(version) if version and version.isdigit() else None,
        )
        return Response(shown.html, media_type="text/html; charset=utf-8")

    @post("/{template_id:str}/test")
    async def test(self, request: AnyRequest, template_id: FromPath[str]) -> Template:
        user = session_of(request).user
        form = await request.form()
        variables, lead_id, _ = _sample(form)
        sender = str(form.get("sender", "") or "").strip() or None
        try:
            result = await self.trials.test(
                user.account_id, template_id, user.email, variables, lead_id, sender
            )
        except (ValidationFailed, LeadNotFound, SenderNotAllowed, RecipientSuppressed) as e:
            said = e.described if isinstance(e, ValidationFailed) else e.message
            return await self._page(request, template_id, {"test": said}, "")
        except DeliveryFailed as e:
            return await self._page(request, template_id, {"test": e.message}, "")
        [message] = result.messages
        notice = f"A test was sent to {user.email} ({message.status.value})."
        return await self._page(request, template_id, {}, notice)

    async def _page(
        self,
        request: AnyRequest,
        template_id: str,
        errors: dict[str, str],
        notice: str,
        values: dict[str, str] | None = None,
    ) -> Template:
        account = session_of(request).user.account_id
        view = await self.templates.view(account, template_id)
        current = view.template
        versions = await self.templates.versions(account, template_id, VERSIONS_SHOWN)
        _, lead_id, sample_text = _sample(request.query_params)
        said = request.query_params.get("said")
        query = {k: v for k, v in request.query_params.items() if k in ("values", "lead_id")}
        return page(
            request,
            "template.html",
            "templates",
            current.name,
            status_code=422 if errors and "test" not in errors else 200,
            view=view,
            template=current,
            versions=versions,
            values=values or _form_of(current),
            errors=errors,
            notice=notice or NOTICES.get(said or "", ""),
            sample=sample_text,
            lead_id=lead_id or "",
            preview_query=query,
            layouts=await self._layouts(account),
        )

    async def _form(
        self, request: AnyRequest, values: dict[str, str], errors: dict[str, str]
    ) -> Template:
        account = session_of(request).user.account_id
        return page(
            request,
            "template_form.html",
            "templates",
            "New template",
            status_code=422 if errors else 200,
            values=values,
            errors=errors,
            layouts=await self._layouts(account),
        )

    async def _layouts(self, account_id: str) -> list[Any]:
        """The account's own layouts, which its templates may name."""
        every = await self.templates.list(account_id)
        return [t for t in every if t.kind is TemplateKind.LAYOUT and not t.predefined]


def _form_of(template: Any) -> dict[str, str]:
    return {
        "name": template.name,
        "subject": template.subject,
        "html": template.body,
        "text": template.text or "",
        "layout_id": template.layout_id or "",
    }
