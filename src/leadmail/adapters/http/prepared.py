"""Answers prepared once and sent as they are."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar import MediaType, Request, Response
from litestar.response.base import ASGIResponse


class PreparedAnswer(Response[Any]):
    """A 200 JSON answer made once and sent as it is to every request: its body encoded,
    its headers set, and the same ASGIResponse handed to Litestar each time (it holds no
    per-request state). Building a response per request was a third of what a request
    for the template list cost (bench/README.md, "Issue 16"). For a route that sets no
    headers or cookies of its own (those would be passed here, and are not taken)."""

    def __init__(self, body: bytes) -> None:
        super().__init__(body, media_type=MediaType.JSON)
        self._asgi = ASGIResponse(body=body, media_type=MediaType.JSON, status_code=200)

    def to_asgi_response(self, app: Any, request: Request[Any, Any, Any], **_: Any) -> ASGIResponse:
        return self._asgi


class PreparedOnce:
    """An answer prepared once per source: kept while the source is the same object."""

    def __init__(self) -> None:
        self._source: object = None
        self._answer = PreparedAnswer(b"")

    def of(self, source: object, encode: Callable[[], bytes]) -> PreparedAnswer:
        if source is not self._source:
            self._answer, self._source = PreparedAnswer(encode()), source
        return self._answer
