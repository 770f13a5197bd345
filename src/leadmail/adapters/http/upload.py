"""An uploaded file read as it arrives, never held whole: the body itself (``text/csv``),
or the ``file`` part of a ``multipart/form-data`` body, found by a small streaming reader
of multipart (RFC 7578) that keeps at most one boundary's length of bytes back."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from litestar import Request
from litestar.exceptions.http_exceptions import RequestEntityTooLarge

from leadmail.domain.errors import ValidationFailed

FILE_PART = "file"
_BOUNDARY = re.compile(r'boundary="?([^";]{1,200})"?', re.IGNORECASE)
_PART_NAME = re.compile(rb'\bname="([^"]*)"', re.IGNORECASE)
MAX_PART_HEADERS = 16_384


def file_of(request: Request[Any, Any, Any], limit: int) -> AsyncIterator[bytes]:
    """The uploaded file's bytes. Raises (as it is read) RequestEntityTooLarge past
    ``limit`` bytes of body (the route has no limit of its own: this is it), and
    ValidationFailed for a multipart body that is malformed or has no ``file`` part."""
    if (request.content_length or 0) > limit:
        raise RequestEntityTooLarge
    body = _limited(request.stream(), limit)
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "multipart/form-data":
        return body
    found = _BOUNDARY.search(content_type)
    if found is None:
        raise ValidationFailed.one("body", "is multipart but names no boundary")
    return multipart_file(body, found.group(1).encode("latin-1"))


async def _limited(stream: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes]:
    size = 0
    async for data in stream:
        size += len(data)
        if size > limit:
            raise RequestEntityTooLarge
        if data:
            yield data


async def multipart_file(
    stream: AsyncIterator[bytes], boundary: bytes, name: str = FILE_PART
) -> AsyncIterator[bytes]:
    """The content of the part called ``name``."""
    delimiter = b"\r\n--" + boundary
    buffer = bytearray(b"\r\n")  # the first boundary has no line break before it
    state = "preamble"
    async for data in stream:
        buffer += data
        while True:
            if state in ("preamble", "skip"):
                at = buffer.find(delimiter)
                if at < 0:
                    del buffer[: max(0, len(buffer) - len(delimiter))]
                    break
                del buffer[: at + len(delimiter)]
                state = "boundary"
            if state == "boundary":
                if len(buffer) < 2:
                    break
                if buffer[:2] == b"--":
                    state = "end"
                    break
                state = "headers"
            if state == "headers":
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    if len(buffer) > MAX_PART_HEADERS:
                        raise ValidationFailed.one(
                            "body", "has a multipart part whose headers are too long"
                        )
                    break
                headers = bytes(buffer[:end])
                del buffer[: end + 4]
                part = _PART_NAME.search(headers)
                state = "file" if part is not None and part.group(1) == name.encode() else "skip"
            if state == "file":
                at = buffer.find(delimiter)
                if at < 0:
                    keep = len(delimiter)
                    if len(buffer) > keep:
                        yield bytes(buffer[:-keep])
                        del buffer[:-keep]
                    break
                if at:
                    yield bytes(buffer[:at])
                return  # the file is read; the rest of the body is not needed
            if state == "end":
                break
    if state == "file":
        raise ValidationFailed.one("body", "ends inside its `file` part")
    raise ValidationFailed.one(name, "is missing from the multipart body")
