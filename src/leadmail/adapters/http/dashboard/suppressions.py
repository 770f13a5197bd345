"""The suppression list: who the account's mail never goes to, and why; an address added
or taken off by hand."""

from __future__ import annotations

from typing import Any, ClassVar

from litestar import Controller, Request, get, post
from litestar.params import FromQuery
from litestar.response import Redirect, Template

from leadmail.adapters.http.dashboard.pages import field_errors, form_values, page, see_other
from leadmail.adapters.http.dashboard.security import DASHBOARD, session_of
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.suppressions import SuppressionReason
from leadmail.services.suppressions import SuppressionList

AnyRequest = Request[Any, Any, Any]
PAGE_SIZE = 50
SUPPRESSIONS = f"{DASHBOARD}/suppressions"
NOTICES = {"added": "Address added.", "known": "That address was on the list already.",
           "removed": "Address taken off the list."}  # fmt: skip


class SuppressionPages(Controller):
    path = "/suppressions"
    include_in_schema = False
    suppressions: ClassVar[SuppressionList]

    @get("/")
    async def listing(
        self,
        request: AnyRequest,
        cursor: FromQuery[str | None] = None,
        reason: FromQuery[str | None] = None,
        said: FromQuery[str | None] = None,
    ) -> Template:
        return await self._listing(request, cursor, reason, NOTICES.get(said or "", ""), {}, "")

    @post("/")
    async def add(self, request: AnyRequest) -> Template | Redirect:
        account = session_of(request).user.account_id
        email = form_values(await request.form(), "email")["email"]
        try:
            added = await self.suppressions.add(account, email)
        except ValidationFailed as e:
            return await self._listing(request, None, None, "", field_errors(e), email)
        return see_other(SUPPRESSIONS, said="added" if added.written else "known")

    @post("/remove")
    async def remove(self, request: AnyRequest) -> Redirect:
        account = session_of(request).user.account_id
        email = form_values(await request.form(), "email")["email"]
        await self.suppressions.remove(account, email)  # SuppressionNotFound: a 404 page
        return see_other(SUPPRESSIONS, said="removed")

    async def _listing(
        self,
        request: AnyRequest,
        cursor: str | None,
        reason: str | None,
        notice: str,
        errors: dict[str, str],
        email: str,
    ) -> Template:
        account = session_of(request).user.account_id
        try:
            chosen = SuppressionReason(reason) if reason else None
        except ValueError:
            chosen, errors = None, {"reason": f"`reason` must be one of {_reasons()}"}
        found = await self.suppressions.list(account, PAGE_SIZE, cursor, chosen)
        return page(
            request,
            "suppressions.html",
            "suppressions",
            "Suppressions",
            status_code=422 if errors else 200,
            entries=found.items,
            next_cursor=found.next_cursor,
            reason=chosen.value if chosen else "",
            reasons=[r.value for r in SuppressionReason],
            notice=notice,
            errors=errors,
            email=email,
            paged=bool(cursor),
        )


def _reasons() -> str:
    return ", ".join(f"`{r.value}`" for r in SuppressionReason)
