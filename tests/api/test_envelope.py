"""Every response, the framework's own included, is the envelope; success is exactly 200."""

from __future__ import annotations

import httpx
import pytest

from tests.api.support import Api
from tests.support.envelope import LEADS, assert_error


def _assert_envelope(response: httpx.Response) -> None:
    body = response.json()
    assert isinstance(body, dict), response.text
    assert isinstance(body.get("success"), bool), response.text
    assert isinstance(body.get("message"), str), response.text
    assert isinstance(body.get("error"), str), response.text
    if body["success"]:
        assert response.status_code == 200, response.text
        assert body["error"] == ""
    else:
        assert response.status_code != 200, response.text
        assert body["error"], response.text
        assert isinstance(body.get("code"), str), response.text
        assert body["code"], response.text


@pytest.mark.parametrize("authorised", [True, False], ids=["with-key", "without-key"])
@pytest.mark.parametrize(
    "path", ["/", "/nope", "/api/v1", "/api/v2/leads", "/api/v1/leads/a/b", "/api/v1/email/x"]
)
async def test_an_unknown_route_is_404_not_found(api: Api, path: str, authorised: bool) -> None:
    response = await api.client.get(path, headers=api.auth if authorised else {})

    body = assert_error(response, 404, "NOT_FOUND")
    assert path in body["error"]


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PATCH", LEADS, {"GET", "POST"}),
        ("DELETE", LEADS, {"GET", "POST"}),
        ("PUT", LEADS, {"GET", "POST"}),
        ("POST", LEADS + "/ld_x", {"GET", "PUT", "DELETE"}),
        ("PATCH", LEADS + "/ld_x", {"GET", "PUT", "DELETE"}),
    ],
)
async def test_a_wrong_method_is_405_with_an_allow_header(
    api: Api, method: str, path: str, allowed: set[str]
) -> None:
    response = await api.client.request(method, path, headers=api.auth)

    body = assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert method in body["error"]
    listed = {m.strip() for m in response.headers["allow"].split(",")}
    assert allowed <= listed
    assert method not in listed


async def test_every_response_of_a_session_is_the_envelope(api: Api) -> None:
    lead = await api.add_lead()
    url = f"{LEADS}/{lead['lead_id']}"
    requests: list[tuple[str, str, dict[str, str], bytes | None]] = [
        ("GET", LEADS, api.auth, None),
        ("GET", url, api.auth, None),
        ("PUT", url, api.auth, b'{"note":"n"}'),
        ("POST", LEADS, api.auth, b'{"name":"G","email":"g@example.com"}'),
        ("POST", LEADS, api.auth, b'{"name":"A","email":"ada@example.com"}'),  # 409
        ("POST", LEADS, api.auth, b'{"name":1}'),  # 422
        ("POST", LEADS, api.auth, b"{"),  # 400
        ("GET", LEADS + "?limit=0", api.auth, None),  # 422
        ("GET", LEADS, {}, None),  # 401
        ("GET", "/missing", api.auth, None),  # 404
        ("PATCH", LEADS, api.auth, None),  # 405
        ("DELETE", url, api.auth, None),
        ("DELETE", url, api.auth, None),  # 404
    ]
    statuses: list[int] = []
    for method, path, headers, content in requests:
        response = await api.client.request(
            method, path, headers={**headers, "Content-Type": "application/json"}, content=content
        )
        _assert_envelope(response)
        statuses.append(response.status_code)

    assert statuses == [200, 200, 200, 200, 409, 422, 400, 422, 401, 404, 405, 200, 404]


@pytest.mark.parametrize("path", [LEADS, LEADS + "/ld_x"])
async def test_options_answers_with_the_envelope(api: Api, path: str) -> None:
    """The contract: every response is the envelope, and a success is exactly HTTP 200."""
    response = await api.client.options(path, headers=api.auth)

    assert response.content, f"OPTIONS {path} -> {response.status_code} with an empty body"
    _assert_envelope(response)


@pytest.mark.parametrize(
    ("path", "methods"), [(LEADS, {"GET", "POST"}), (LEADS + "/ld_x", {"GET", "PUT", "DELETE"})]
)
async def test_options_allow_header_lists_every_method_of_the_route(
    api: Api, path: str, methods: set[str]
) -> None:
    response = await api.client.options(path, headers=api.auth)

    listed = {m.strip() for m in response.headers.get("allow", "").split(",")}
    assert methods <= listed, f"Allow: {response.headers.get('allow')!r}"
