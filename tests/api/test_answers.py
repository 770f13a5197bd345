"""JsonAnswer, the app's response class: a Struct goes out as Litestar would send it, by a
shorter way; what the shorter way does not cover takes Litestar's own."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Litestar, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.testing import AsyncTestClient

from leadmail.adapters.http.answers import JsonAnswer, JsonBody


class Thing(msgspec.Struct):
    name: str
    sizes: list[int]
    note: str | None = None


THING = Thing(name="é & <b>", sizes=[1, 2, 3])


@get("/thing")
async def thing() -> Thing:
    return THING


@post("/thing", status_code=201)
async def made() -> Thing:
    return THING


@get("/with-header", response_headers=[ResponseHeader(name="x-extra", value="1")])
async def with_header() -> Thing:
    return THING


@get("/own-response")
async def own_response() -> Response[Thing]:
    return Response(THING, headers={"x-own": "yes"}, status_code=202)


@get("/mapping")
async def mapping() -> dict[str, Any]:
    return {"b": 1, "a": [True, None]}


HANDLERS = [thing, made, with_header, own_response, mapping]


def returning(answer: type[Response[Any]]) -> list[Any]:
    """Routes that build their own answer of class ``answer`` (as the send routes do)."""

    @get("/built")
    async def built() -> Response[Thing]:
        return answer(THING)

    @post("/built-with-header")
    async def built_with_header() -> Response[Thing]:
        return answer(THING, headers={"Idempotent-Replayed": "true"})

    return [built, built_with_header]


async def _answers(app: Litestar, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    async with AsyncTestClient(app) as client:
        response = await client.request(method, path)
    return response.status_code, dict(response.headers), response.content


async def test_every_answer_is_what_litestar_itself_sends() -> None:
    ours = Litestar(route_handlers=[*HANDLERS, *returning(JsonAnswer)], response_class=JsonAnswer)
    theirs = Litestar(route_handlers=[*HANDLERS, *returning(Response)])
    for method, path in [
        ("GET", "/built"),
        ("POST", "/built-with-header"),
        ("GET", "/thing"),
        ("POST", "/thing"),
        ("GET", "/with-header"),
        ("GET", "/own-response"),
        ("GET", "/mapping"),
    ]:
        assert await _answers(ours, method, path) == await _answers(theirs, method, path), path


async def test_a_struct_takes_the_short_way_and_anything_else_litestars() -> None:
    request: Any = object()  # the short way never reads the request
    short = JsonAnswer(THING, status_code=200).to_asgi_response(None, request)
    assert isinstance(short, JsonBody)
    assert msgspec.json.decode(short.body) == {"name": "é & <b>", "sizes": [1, 2, 3], "note": None}
    assert short.status == 200

    with_headers = JsonAnswer(THING, headers={"x-a": "1"})
    assert not isinstance(with_headers.to_asgi_response(None, request), JsonBody)
    route_headers = JsonAnswer(THING).to_asgi_response(None, request, headers={"x-b": "2"})
    assert not isinstance(route_headers, JsonBody)
    not_a_struct = JsonAnswer({"a": 1})
    assert not isinstance(not_a_struct.to_asgi_response(None, request), JsonBody)
    changed_later = JsonAnswer(THING)
    changed_later.set_header("x-c", "3")
    assert not isinstance(changed_later.to_asgi_response(None, request), JsonBody)
