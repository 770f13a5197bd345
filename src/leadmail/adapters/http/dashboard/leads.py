"""The lead base: a table filtered as the API's segments are, a page per lead with what
happened to it, and the forms that add, change and delete leads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from litestar import Controller, Request, get, post
from litestar.params import FromPath
from litestar.response import Redirect, Stream, Template

from leadmail.adapters.http.dashboard import pages
from leadmail.adapters.http.dashboard.pages import (
    field_errors,
    form_values,
    key_values,
    page,
    query_of,
    see_other,
)
from leadmail.adapters.http.dashboard.security import DASHBOARD, session_of
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.leads import Lead, LeadChanges, LeadFields
from leadmail.domain.segments import FIELD_PREFIX
from leadmail.domain.tags import TagChange
from leadmail.ports.errors import DuplicateLead
from leadmail.services.lead_export import LeadExport
from leadmail.services.lead_timeline import LeadTimeline
from leadmail.services.leads import LeadService

AnyRequest = Request[Any, Any, Any]
PAGE_SIZE = 50
TEXT_FIELDS = ("name", "email", "source", "phone", "note")
# The filter form's inputs, as the API's query parameters name them; a custom field is
# asked as a key and a value (the API's ``field.<key>=<value>``).
FILTERS = ("q", "tag", "source")
LEADS = f"{DASHBOARD}/leads"


def segment_pairs(query: Mapping[str, str]) -> list[tuple[str, str]]:
    pairs = [(name, query[name].strip()) for name in FILTERS if query.get(name, "").strip()]
    key, value = query.get("field_key", "").strip(), query.get("field_value", "").strip()
    if key:
        pairs.append((FIELD_PREFIX + key, value))
    return pairs


def _tags(text: str) -> list[str]:
    return [tag.strip() for tag in text.split(",") if tag.strip()]


def _fields_text(lead: Lead | None) -> str:
    if lead is None:
        return ""
    return "\n".join(f"{key}: {value}" for key, value in sorted(lead.fields.items()))


def _form_of(lead: Lead | None) -> dict[str, str]:
    if lead is None:
        return dict.fromkeys((*TEXT_FIELDS, "tags", "fields"), "")
    values = {name: getattr(lead, name) for name in TEXT_FIELDS}
    return {**values, "tags": ", ".join(lead.tags), "fields": _fields_text(lead)}


class LeadPages(Controller):
    path = "/leads"
    include_in_schema = False
    leads: ClassVar[LeadService]
    timeline: ClassVar[LeadTimeline]
    exports: ClassVar[LeadExport]

    @get("/")
    async def listing(self, request: AnyRequest) -> Template:
        account = session_of(request).user.account_id
        query = query_of(request)
        segment = segment_pairs(query)
        errors: dict[str, str] = {}
        try:
            asked = LeadQuery.parse(
                limit=PAGE_SIZE, cursor=query.get("cursor") or None, segment=segment
            )
        except ValidationFailed as e:
            errors = field_errors(e)
            asked = LeadQuery.parse(limit=PAGE_SIZE)
        found = await self.leads.list(account, asked)
        count = await self.leads.count(account, asked.filter, at_most=pages.COUNT_UP_TO + 1)
        kept = {k: v for k, v in query.items() if k not in ("cursor", "deleted") and v}
        return page(
            request,
            "leads.html",
            "leads",
            "Leads",
            status_code=422 if errors else 200,
            leads=found.leads,
            next_cursor=found.next_cursor,
            count=count,
            count_shown=pages.shown_count(count, asked.filter),
            filters=kept,
            errors=errors,
            paged=bool(query.get("cursor")),
            notice="Lead deleted." if query.get("deleted") else "",
        )

    @get("/export")
    async def export_csv(self, request: AnyRequest) -> Stream:
        account = session_of(request).user.account_id
        query = query_of(request)
        segment = LeadQuery.parse(segment=segment_pairs(query)).filter
        text = await self.exports.open(account, segment)
        return Stream(
            text,
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": 'attachment; filename="leads.csv"'},
        )

    @get("/new")
    async def new(self, request: AnyRequest) -> Template:
        return self._form(request, None, _form_of(None), {})

    @post("/")
    async def add(self, request: AnyRequest) -> Template | Redirect:
        account = session_of(request).user.account_id
        values = form_values(await request.form(), *TEXT_FIELDS, "tags", "fields")
        try:
            fields = LeadFields.parse(
                **{name: values[name] for name in TEXT_FIELDS},
                tags=_tags(values["tags"]),
                fields=key_values(values["fields"]),
            )
            lead = await self.leads.add(account, fields)
        except ValidationFailed as e:
            return self._form(request, None, values, field_errors(e))
        except DuplicateLead as e:
            return self._form(request, None, values, {"email": e.message})
        return see_other(f"{LEADS}/{lead.lead_id}", added="1")

    @get("/{lead_id:str}")
    async def lead(self, request: AnyRequest, lead_id: FromPath[str]) -> Template:
        account = session_of(request).user.account_id
        lead = await self.leads.get(account, lead_id)
        timeline = await self.timeline.page(account, lead_id, 50, None)
        notice = {"added": "Lead added.", "updated": "Lead updated.", "tags": "Tags changed."}
        said = next((text for key, text in notice.items() if request.query_params.get(key)), "")
        return page(
            request,
            "lead.html",
            "leads",
            lead.name,
            lead=lead,
            timeline=timeline,
            notice=said,
        )

    @get("/{lead_id:str}/edit")
    async def edit(self, request: AnyRequest, lead_id: FromPath[str]) -> Template:
        lead = await self.leads.get(session_of(request).user.account_id, lead_id)
        return self._form(request, lead, _form_of(lead), {})

    @post("/{lead_id:str}")
    async def update(self, request: AnyRequest, lead_id: FromPath[str]) -> Template | Redirect:
        account = session_of(request).user.account_id
        lead = await self.leads.get(account, lead_id)
        values = form_values(await request.form(), *TEXT_FIELDS, "tags", "fields")
        before, after = key_values(_fields_text(lead)), key_values(values["fields"])
        # Only what the form changed: a field shown as text and left alone keeps its type.
        patch: dict[str, object] = {k: v for k, v in after.items() if before.get(k) != v}
        patch.update(dict.fromkeys(before.keys() - after.keys()))
        try:
            changes = LeadChanges.parse(
                **{name: values[name] for name in TEXT_FIELDS},
                tags=_tags(values["tags"]),
                fields=patch,
            )
            await self.leads.update(account, lead_id, changes)
        except ValidationFailed as e:
            return self._form(request, lead, values, field_errors(e))
        except DuplicateLead as e:
            return self._form(request, lead, values, {"email": e.message})
        return see_other(f"{LEADS}/{lead_id}", updated="1")

    @post("/{lead_id:str}/tags")
    async def change_tags(self, request: AnyRequest, lead_id: FromPath[str]) -> Template | Redirect:
        account = session_of(request).user.account_id
        form = form_values(await request.form(), "add", "remove")
        try:
            change = TagChange.parse(_tags(form["add"]), _tags(form["remove"]))
            await self.leads.change_tags(account, lead_id, change)
        except ValidationFailed as e:
            lead = await self.leads.get(account, lead_id)
            timeline = await self.timeline.page(account, lead_id, 50, None)
            return page(
                request,
                "lead.html",
                "leads",
                lead.name,
                status_code=422,
                lead=lead,
                timeline=timeline,
                tag_form=form,
                errors=field_errors(e),
            )
        return see_other(f"{LEADS}/{lead_id}", tags="1")

    @post("/{lead_id:str}/delete")
    async def delete(self, request: AnyRequest, lead_id: FromPath[str]) -> Redirect:
        await self.leads.delete(session_of(request).user.account_id, lead_id)
        return see_other(LEADS, deleted="1")

    def _form(
        self, request: AnyRequest, lead: Lead | None, values: dict[str, str], errors: dict[str, str]
    ) -> Template:
        return page(
            request,
            "lead_form.html",
            "leads",
            "Edit lead" if lead else "Add a lead",
            status_code=422 if errors else 200,
            lead=lead,
            values=values,
            errors=errors,
        )
