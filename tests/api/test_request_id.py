"""X-Request-ID: a sane one from the client is kept, anything else is replaced by a fresh
one, and every response carries it."""

from __future__ import annotations

import pytest

from tests.api.support import SANE_REQUEST_ID, Api
from tests.support.envelope import LEADS


@pytest.mark.parametrize(
    "incoming", ["abc-123", "req_0123456789abcdef", "a.b:c_d-e", "7", "x" * 128]
)
async def test_a_sane_request_id_is_echoed(api: Api, incoming: str) -> None:
    response = await api.client.get(LEADS, headers={**api.auth, "X-Request-ID": incoming})

    assert response.status_code == 200
    assert response.headers["x-request-id"] == incoming


async def test_without_one_a_fresh_request_id_is_minted_per_request(api: Api) -> None:
    first = await api.client.get(LEADS, headers=api.auth)
    second = await api.client.get(LEADS, headers=api.auth)

    ids = [first.headers["x-request-id"], second.headers["x-request-id"]]
    assert all(SANE_REQUEST_ID.fullmatch(i) for i in ids)
    assert ids[0] != ids[1]


@pytest.mark.parametrize(
    "incoming",
    ["has spaces in it", "x" * 300, "x" * 129, "semi;colon", "<script>", "ünïcode", ""],
    ids=["spaces", "300-chars", "129-chars", "semicolon", "markup", "non-ascii", "empty"],
)
async def test_an_insane_request_id_is_replaced(api: Api, incoming: str) -> None:
    response = await api.client.get(
        LEADS,
        headers=[
            (b"Authorization", f"Bearer {api.key.secret}".encode()),
            (b"X-Request-ID", incoming.encode("latin-1")),
        ],
    )

    assert response.status_code == 200
    echoed = response.headers["x-request-id"]
    assert echoed != incoming
    assert SANE_REQUEST_ID.fullmatch(echoed)


@pytest.mark.parametrize(
    ("method", "path", "authorised"),
    [
        ("GET", LEADS, False),
        ("GET", "/nowhere", True),
        ("PATCH", LEADS, True),
        ("GET", LEADS + "/ld_missing", True),
        ("GET", "/schema/openapi.json", False),
    ],
    ids=["401", "404-route", "405", "404-lead", "openapi"],
)
async def test_every_response_carries_the_request_id(
    api: Api, method: str, path: str, authorised: bool
) -> None:
    headers = {**(api.auth if authorised else {}), "X-Request-ID": "trace-me"}

    response = await api.client.request(method, path, headers=headers)

    assert response.headers.get_list("x-request-id") == ["trace-me"]
