"""structlog set-up: JSON lines for machines, colours for people, always on stderr.

stdout belongs to the CLI's own output. Library logs (uvicorn, asyncpg, piccolo) go
through the same renderer so every line has one shape.
"""

from __future__ import annotations

import contextvars
import logging
import sys
import time
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


_second: list[Any] = [None, ""]  # the last whole second formatted, and its text
_DIGITS = tuple(f"{n:03d}" for n in range(1000))  # "000" ... "999"


def add_timestamp(_: Any, __: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    """What TimeStamper(fmt="iso", utc=True) adds, ``2026-11-22T10:15:30.123456Z``, at a
    fraction of its cost (every line has one, one per request at least): the date and
    time of day are formatted once a second, the microseconds from a table."""
    ns = time.time_ns()
    second = ns // 1_000_000_000
    if _second[0] != second:
        _second[:] = [second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))]
    micro = ns // 1000 % 1_000_000
    event_dict["timestamp"] = (
        f"{_second[1]}.{_DIGITS[micro // 1000]}{_DIGITS[micro % 1000]}Z"
        if micro
        else f"{_second[1]}Z"
    )
    return event_dict


# The processors, logger and whether info is on, as configure_logging set them last.
_chain: tuple[tuple[Any, ...], Any, bool] | None = None


class RequestLog:
    """The one line written per request, with structlog's ``info(event, **fields)``.

    It runs the chain configure_logging gave structlog (the same processors, in the same
    order, so the line has every other line's shape) but calls them itself: a bound
    logger's wrapper around the chain (a lazy proxy, a context copy, keyword re-packing)
    costs as much again as the chain on every request (bench/README.md). Anything else
    logs through ``structlog.get_logger``.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def info(self, event: str, **fields: Any) -> None:
        chain = _chain
        if chain is None:  # logging not configured here: structlog as it stands
            structlog.get_logger(self._name).info(event, **fields)
            return
        processors, logger, enabled = chain
        if not enabled:
            return
        fields["event"] = event
        line: Any = fields
        try:
            for processor in processors:
                line = processor(logger, "info", line)
        except structlog.DropEvent:
            return
        logger.msg(line)


def configure_logging(fmt: LogFormat, level: str = "INFO") -> None:
    global _chain
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    shared: list[Any] = [add_request_id, structlog.processors.add_log_level, add_timestamp]
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

    processors = [*shared, renderer]
    _chain = (tuple(processors), structlog.WriteLogger(sys.stderr), numeric <= logging.INFO)
    structlog.configure(
        processors=processors,
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
