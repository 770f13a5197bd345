"""Booleans of a body taken as JSON's own true and false only. Litestar converts a decoded
body into its Struct leniently (``0``, ``"false"`` become False), which would let a typo
send a message to an address it meant to spare; the flags are checked against the body as
decoded instead (Request.json keeps it: no second decoding)."""

from __future__ import annotations

from typing import Any

from litestar import Request

from leadmail.domain.errors import FieldError, ValidationFailed

NOT_A_FLAG = "must be true or false"


async def check_flags(request: Request[Any, Any, Any], *names: str) -> None:
    """ValidationFailed naming each of ``names`` the body gives as anything but a JSON
    boolean."""
    body = await request.json()
    if not isinstance(body, dict):
        return
    wrong = [n for n in names if n in body and not isinstance(body[n], bool)]
    if wrong:
        raise ValidationFailed([FieldError(name, NOT_A_FLAG) for name in wrong])
