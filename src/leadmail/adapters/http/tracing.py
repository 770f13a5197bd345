"""Request ids, the one log line per request, and its figures for GET /metrics.

This wraps the whole Litestar app, not one route, so requests that match no route (404),
use the wrong method (405) or fail before routing are logged and carry an id too.
"""

from __future__ import annotations

import random
import re
import time
from typing import Any

from litestar import Litestar
from litestar.enums import ScopeType
from litestar.types import (
    HTTPScope,
    LifeSpanReceive,
    LifeSpanScope,
    LifeSpanSend,
    Message,
    Receive,
    Scope,
    Send,
)

from leadmail.adapters.http.request_metrics import record_request
from leadmail.logs import RequestLog, request_id_var

REQUEST_ID_HEADER = b"x-request-id"
RESPONSE_HEADERS = "response_headers"  # scope["state"]: more headers for the answer
# A request id a client may send (any other is replaced); new_request_id makes one too.
REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

access_log = RequestLog("leadmail.access")


def new_request_id() -> str:
    # 64 random bits: unique, not secret (it is shown to the client and logged), so the
    # process's PRNG rather than os.urandom, a system call per request.
    return f"req_{random.getrandbits(64):016x}"


def request_id_of(scope: Scope) -> str:
    state: dict[str, Any] = scope.setdefault("state", {})
    rid = state.get("request_id")
    if not isinstance(rid, str):
        rid = state["request_id"] = new_request_id()
    return rid


def _incoming_id(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == REQUEST_ID_HEADER:
            text = value.decode("latin-1")
            return text if REQUEST_ID.fullmatch(text) else None
    return None


class TracedLitestar(Litestar):
    """Litestar with request ids (``X-Request-ID`` accepted if sane, else minted, and echoed)
    and an access log line: request id, account, method, route template, status, duration.
    Never the path's values, the query string, headers or bodies: they carry personal data
    and secrets."""

    async def __call__(
        self,
        scope: Scope | LifeSpanScope,
        receive: Receive | LifeSpanReceive,
        send: Send | LifeSpanSend,
    ) -> None:
        if scope["type"] != ScopeType.HTTP:
            await super().__call__(scope, receive, send)
            return
        http: HTTPScope = scope  # type: ignore[assignment]  # narrowed by the type check
        started = time.perf_counter()
        request_id = _incoming_id(http) or new_request_id()
        http.setdefault("state", {})["request_id"] = request_id
        id_header = (REQUEST_ID_HEADER, request_id.encode())
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                # and what a hook asked to add (budgets.py: the RateLimit-* headers)
                extra = http["state"].get(RESPONSE_HEADERS, ())
                message["headers"] = [*message.get("headers", ()), id_header, *extra]
            await send(message)  # type: ignore[arg-type]

        token = request_id_var.set(request_id)
        try:
            await super().__call__(scope, receive, send_with_id)
        finally:
            user = http.get("user")
            route = http.get("path_template") or "<unmatched>"
            seconds = time.perf_counter() - started
            access_log.info(
                "request",
                account_id=getattr(user, "account_id", None),
                method=http["method"],
                route=route,
                status=status,
                duration_ms=round(seconds * 1000, 2),
            )
            record_request(route, http["method"], status, seconds)
            request_id_var.reset(token)
