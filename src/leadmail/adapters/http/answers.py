"""The response class of every route: a handler's msgspec Struct goes out as JSON in one
encode and two ASGI messages.

Litestar builds a ``Response`` around what a handler returns, merges header, cookie and
type-encoder maps into it (ABC checks and dict copies: the type encoders Litestar's
pydantic plugin adds to every route are copied twice per answer), then an
``ASGIResponse`` with a header object of its own (bench/README.md, "Session 6"). A plain
JSON answer uses none of it. So an answer that is a Struct, with no headers, cookies or
background task of its own or of its route, skips that machinery (encoded with the
route's type encoders, as Litestar would); anything else takes Litestar's own path,
unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

import msgspec
from litestar import MediaType, Request, Response
from litestar.background_tasks import BackgroundTask, BackgroundTasks
from litestar.datastructures import Cookie
from litestar.serialization import get_serializer
from litestar.types import Receive, Scope, Send, TypeEncodersMap

from leadmail.domain.email import MessageStatus
from leadmail.services.results import SendResult

T = TypeVar("T")

_JSON_TYPE = (b"content-type", b"application/json")


class JsonBody:
    """An ASGI app that sends one JSON body: the headers ASGIResponse would send for it
    (content type and length), in a list of their own (tracing appends the request id)."""

    __slots__ = ("body", "status")

    def __init__(self, body: bytes, status: int) -> None:
        self.body = body
        self.status = status

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = self.body
        await send(
            {
                "type": "http.response.start",
                "status": self.status,
                "headers": [_JSON_TYPE, (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body, "more_body": False})


class _Encoders:
    """A msgspec encoder per route's type encoders (the same mapping every time), with the
    hook Litestar's own JSON rendering uses for the types msgspec does not know."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[object, msgspec.json.Encoder]] = {}

    def __call__(self, type_encoders: TypeEncodersMap | None) -> msgspec.json.Encoder:
        known = self._by_id.get(id(type_encoders))
        if known is not None and known[0] is type_encoders:
            return known[1]
        encoder = msgspec.json.Encoder(enc_hook=get_serializer(type_encoders))
        self._by_id[id(type_encoders)] = (type_encoders, encoder)  # kept: its id stays its own
        return encoder


_encoder_for = _Encoders()


class JsonAnswer(Response[T]):
    __slots__ = ("_plain",)

    def __init__(
        self,
        content: T,
        *,
        background: BackgroundTask | BackgroundTasks | None = None,
        cookies: Any = None,
        encoding: str = "utf-8",
        headers: Any = None,
        media_type: MediaType | str | None = None,
        status_code: int | None = None,
        type_encoders: TypeEncodersMap | None = None,
    ) -> None:
        self._plain = (
            isinstance(content, msgspec.Struct)
            and background is None
            and not cookies
            and not headers
            and (media_type is None or media_type == MediaType.JSON)
        )
        if not self._plain:
            super().__init__(
                content,
                background=background,
                cookies=cookies,
                encoding=encoding,
                headers=headers,
                media_type=media_type,
                status_code=status_code,
                type_encoders=type_encoders,
            )
            return
        # What Response.__init__ sets, without its copies of maps.
        self.content = content
        self.background = None
        self.cookies = []
        self.encoding = encoding
        self.headers = {}
        self.media_type = MediaType.JSON
        self.status_code = status_code
        self.response_type_encoders = type_encoders  # type: ignore[assignment]  # None or a map

    def to_asgi_response(  # an ASGI app, as Litestar allows
        self,
        app: Any,
        request: Request[Any, Any, Any],
        *,
        background: BackgroundTask | BackgroundTasks | None = None,
        cookies: Iterable[Cookie] | None = None,
        encoded_headers: Iterable[tuple[bytes, bytes]] | None = None,
        headers: dict[str, str] | None = None,
        is_head_response: bool = False,
        media_type: MediaType | str | None = None,
        status_code: int | None = None,
        type_encoders: TypeEncodersMap | None = None,
    ) -> Any:
        own = self.response_type_encoders
        if (
            self._plain
            and not (self.headers or self.cookies or self.background is not None)
            and not (background or cookies or encoded_headers or headers or is_head_response)
            and (not own or not type_encoders or own is type_encoders)
        ):
            encoder = _encoder_for(own or type_encoders)
            return JsonBody(encoder.encode(self.content), self.status_code or status_code or 200)
        return super().to_asgi_response(
            app,
            request,
            background=background,
            cookies=cookies,
            encoded_headers=encoded_headers,
            headers=headers,
            is_head_response=is_head_response,
            media_type=media_type,
            status_code=status_code,
            type_encoders=type_encoders,
        )


def sent_message(result: SendResult) -> str:
    """A send's answer's ``message``: how many recipients were sent to (and held back)."""
    if not result.per_recipient:
        return "Email sent"
    count = len(result.messages)
    held = sum(m.status is MessageStatus.SUPPRESSED for m in result.messages)
    if held:
        return f"Email sent to {count - held} of {count} recipients ({held} suppressed)"
    return "Email sent" if count == 1 else f"Email sent to {count} recipients"
