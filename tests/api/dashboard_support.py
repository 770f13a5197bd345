"""Helpers of the in-process dashboard tests: a signed-in user of the API tests' account,
and forms posted with their CSRF token as a browser posts them."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

from tests.api.support import Api, Client, open_api

PASSWORD = "a long enough password"
_CSRF = re.compile(r'name="_csrf_token" value="([^"]+)"')


@dataclass
class Staff:
    api: Api
    email: str

    @property
    def client(self) -> Client:
        return self.api.client


async def csrf_of(client: Client, path: str) -> str:
    page = await client.get(path)
    assert page.status_code == 200, page.text
    found = _CSRF.search(page.text)
    assert found, "the page carries no CSRF token"
    return found.group(1)


async def post_form(client: Client, path: str, form_page: str, data: dict[str, str]) -> object:
    token = await csrf_of(client, form_page)
    return await client.post(path, data={**data, "_csrf_token": token}, follow_redirects=False)


async def invite(api: Api, account: str, email: str) -> str:
    """A user of ``account`` with PASSWORD set; its address."""
    invitation = await api.services.users.create(account, email)
    await api.services.users.set_password(invitation.link.rsplit("/", 1)[1], PASSWORD)
    return email


async def sign_in(client: Client, email: str, password: str = PASSWORD) -> object:
    token = await csrf_of(client, "/app/sign-in")
    return await client.post(
        "/app/sign-in",
        data={"email": email, "password": password, "_csrf_token": token},
        follow_redirects=False,
    )


@contextlib.asynccontextmanager
async def signed_in_staff() -> AsyncIterator[Staff]:
    """A user of the API tests' account "acme", signed in on the app's client."""
    async with open_api() as api:
        email = await invite(api, api.key.key.account_name, "ada@school.example")
        response = await sign_in(api.client, email)
        assert response.status_code == 303, response.text  # type: ignore[attr-defined]
        yield Staff(api, email)
