"""How deep a JSON body may nest, checked before it is decoded: every JSON body is decoded
through ``Request.json`` (Litestar's body extractor calls it), so the app's request class
(``DepthCheckedRequest``) checks there, once, for every route. The decoder is recursive:
unchecked, a body of a thousand ``[`` ends in a RecursionError (a 500)."""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

from litestar import Request
from litestar.exceptions import SerializationException

MAX_JSON_DEPTH = 64  # arrays and objects inside one another; no body of the API needs 5
TOO_DEEP = f"The JSON nests arrays and objects more than {MAX_JSON_DEPTH} deep"

_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"')  # a JSON string: its brackets are text
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_OPENED_IN_A_ROW = re.compile(rb"[\[{]{%d}" % (MAX_JSON_DEPTH + 1))


def too_deep(body: bytes) -> bool:
    """Whether ``body`` opens more than MAX_JSON_DEPTH arrays or objects inside one another
    (outside its strings). Linear, and in C: most bodies have too few brackets to nest that
    deep and are answered by counting them; a deep one mostly opens a run of brackets (its
    keys and strings taken out); any other has its depth summed over its brackets."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return False
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    if _OPENED_IN_A_ROW.search(brackets):
        return True
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > MAX_JSON_DEPTH


class DepthCheckedRequest(Request[Any, Any, Any]):
    """The app's request class: a JSON body nested too deep is malformed (400), refused
    before the decoder recurses into it."""

    async def json(self) -> Any:
        if too_deep(await self.body()):
            raise SerializationException(TOO_DEEP)
        return await super().json()
