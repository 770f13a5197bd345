"""The account's API keys (made, shown once, revoked, last used) and its sender domains."""

from __future__ import annotations

from typing import Any, ClassVar

from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect, Template

from leadmail.adapters.http.dashboard.pages import field_errors, form_values, page, see_other
from leadmail.adapters.http.dashboard.security import DASHBOARD, session_of
from leadmail.domain.errors import ApiKeyNotFound, ValidationFailed
from leadmail.services.keys import ApiKeyService, CreatedKey
from leadmail.services.sender_domains import SenderDomainService

AnyRequest = Request[Any, Any, Any]
KEYS = f"{DASHBOARD}/keys"


class KeyPages(Controller):
    path = "/keys"
    include_in_schema = False
    keys: ClassVar[ApiKeyService]
    sender_domains: ClassVar[SenderDomainService]

    @get("/")
    async def listing(self, request: AnyRequest, said: FromQuery[str | None] = None) -> Template:
        notice = "Key revoked: it is refused from the next request on." if said == "revoked" else ""
        return await self._page(request, notice=notice)

    @post("/")
    async def create(self, request: AnyRequest) -> Template:
        user = session_of(request).user
        label = form_values(await request.form(), "label")["label"]
        try:
            created = await self.keys.create(user.account_name, label)
        except ValidationFailed as e:
            return await self._page(request, errors=field_errors(e), label=label)
        # Shown here, once: never in a URL, never again.
        return await self._page(request, created=created)

    @post("/{key_id:str}/revoke")
    async def revoke(self, request: AnyRequest, key_id: FromPath[str]) -> Redirect:
        try:
            await self.keys.revoke(key_id, session_of(request).user.account_name)
        except ApiKeyNotFound as e:  # (no API route answers it: not in the error table)
            raise NotFoundException(e.message) from e
        return see_other(KEYS, said="revoked")

    async def _page(
        self,
        request: AnyRequest,
        *,
        created: CreatedKey | None = None,
        errors: dict[str, str] | None = None,
        label: str = "",
        notice: str = "",
    ) -> Template:
        user = session_of(request).user
        return page(
            request,
            "keys.html",
            "keys",
            "Keys and senders",
            status_code=422 if errors else 200,
            keys=await self.keys.list(user.account_name),
            domains=await self.sender_domains.list(user.account_id),
            created=created,
            errors=errors or {},
            label=label,
            notice=notice,
        )
