"""structlog set-up: JSON lines for machines, colours for people, always on stderr.

stdout belongs to the CLI's own output. Library logs (uvicorn, asyncpg, piccolo) go
through the same renderer so every line has one shape.
"""

from __future__ import annotations

import contextvars
import logging
import sys
import time
from dataclasses import dataclass
from typing import Any

import msgspec
import structlog

from leadmail.config import LogFormat

# The id of the request being served, set by the HTTP adapter for the request's duration
# and added to every line logged meanwhile. One ContextVar read per line instead of
# structlog's merge_contextvars, which copies the whole context each time.
request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "leadmail_request_id", default=None
)
_json = msgspec.json.Encoder()


def add_request_id(_: Any, __: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    request_id = request_id_var.get()
    if request_id is not None:
        event_dict.setdefault("request_id", request_id)
    return event_dict


def _dumps(event_dict: Any, default: Any = repr, **_: Any) -> str:
    # msgspec rather than json.dumps: about a third of an access line's cost. A value it
    # cannot encode (a path, an exception) goes through structlog's own fallback, as
    # json.dumps would send it.
    try:
        return _json.encode(event_dict).decode()
    except TypeError:
        return msgspec.json.encode(event_dict, enc_hook=default).decode()


@dataclass(frozen=True, slots=True)
class _JsonSink:
    writer: structlog.WriteLogger
    info_enabled: bool


# Set by configure_logging("json"); None means "through structlog".
_json_sink: _JsonSink | None = None


_second: list[Any] = [None, ""]  # the last whole second formatted, and its text


def _iso_now() -> str:
    """What TimeStamper(fmt="iso", utc=True) writes, ``2026-11-22T10:15:30.123456Z``,
    for a tenth of the instructions: the date and time of day change once a second."""
    now = time.time()
    second = int(now)
    if _second[0] != second:
        _second[:] = [second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))]
    micro = int((now - second) * 1_000_000)
    return f"{_second[1]}.{micro:06d}Z" if micro else f"{_second[1]}Z"


class HotLog:
    """A logger for the one line written per request, with structlog's ``info(event,
    **fields)``.

    With JSON logs it writes the line itself, in exactly the shape structlog's chain gives
    every other line (the fields, ``event``, ``request_id``, ``level``, ``timestamp``):
    that chain (a lazy proxy, a context copy, five processors) was 7 % of the instructions
    of a whole POST /leads. With console logs, it is plain structlog.
    """

    def __init__(self, name: str) -> None:
        self._logger = structlog.get_logger(name)

    def info(self, event: str, **fields: Any) -> None:
        sink = _json_sink
        if sink is None:
            self._logger.info(event, **fields)
            return
        if not sink.info_enabled:
            return
        fields["event"] = event
        add_request_id(None, "info", fields)  # then what the other processors add:
        fields["level"] = "info"
        fields["timestamp"] = _iso_now()
        sink.writer.msg(_dumps(fields))


def configure_logging(fmt: LogFormat, level: str = "INFO") -> None:
    global _json_sink
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    _json_sink = (
        _JsonSink(structlog.WriteLogger(sys.stderr), numeric <= logging.INFO)
        if fmt == "json"
        else None
    )
    # HotLog writes the access line without this chain: a processor added here must be
    # added there too (tests/api/test_logging.py compares the two lines).
    shared: list[Any] = [
        add_request_id,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Any
    if fmt == "json":
        # No show_locals: a frame's locals can hold a key or a message body.
        shared.append(
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            )
        )
        renderer = structlog.processors.JSONRenderer(serializer=_dumps)
    else:
        renderer = structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        )

    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.WriteLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    for noisy in ("uvicorn.access", "httpx", "httpcore", "aiosqlite", "asyncio", "piccolo"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
