"""structlog set-up: JSON lines for machines, colours for people, always on stderr.

stdout belongs to the CLI's own output. Library logs (uvicorn, asyncpg, piccolo) go
through the same renderer so every line has one shape.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import logging
import sys
import threading
import time
from collections.abc import AsyncIterator
from typing import Any, TextIO

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


class LineBuffer:
    """Where every log line goes. Info lines logged within a few milliseconds of each
    other are written to the stream together, in one write; anything else is written at
    once, after what is held (so lines keep their order).

    A write and flush per access line cost more than formatting it: on a server under
    load, 15 us per request against 2.2 us (bench/README.md, "Issue 16"). So an info line
    waits up to ``HOLD_SECONDS`` for others to join it. Written at once: a warning or
    worse, every standard-library record (uvicorn's start-up and shut-down lines: the
    process may end by a re-raised SIGTERM, with no exit handlers, right after them), a
    line outside an event loop (the CLI, another thread), and a full buffer. The app's
    lifespan writes what is held when it ends, and so does the process's exit.
    structlog calls it as a logger (``msg``, ``info``, ``warning``, ...), the standard
    library through LineHandler.
    """

    HOLD_SECONDS = 0.01
    MAX_LINES = 1000

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._scheduled = False  # a write of what is held is on its way

    def msg(self, message: str) -> None:
        with self._lock:
            self._lines.append(message)
            if self._scheduled and len(self._lines) < self.MAX_LINES:
                return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop in this thread: written at once
            self.flush()
            return
        with self._lock:
            if len(self._lines) < self.MAX_LINES:
                if self._scheduled:
                    return
                self._scheduled = True
                loop.call_later(self.HOLD_SECONDS, self.flush)
                return
        self.flush()

    debug = info = msg

    def now(self, message: str) -> None:
        """Written at once, after whatever is held."""
        with self._lock:
            self._lines.append(message)
        self.flush()

    warning = warn = error = err = critical = fatal = exception = failure = log = now

    def flush(self) -> None:
        with self._lock:
            lines, self._lines, self._scheduled = self._lines, [], False
        if lines:
            self._stream.write("\n".join(lines) + "\n")
            self._stream.flush()


class LineHandler(logging.Handler):
    """The standard library's records, formatted, into the same LineBuffer (so every
    line keeps its order), each written at once."""

    def __init__(self, buffer: LineBuffer) -> None:
        super().__init__()
        self._buffer = buffer

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._buffer.now(self.format(record))
        except Exception:  # as logging.StreamHandler: never raise from a log call
            self.handleError(record)


# The processors, the line buffer and whether info is on, as configure_logging set them.
_chain: tuple[tuple[Any, ...], LineBuffer, bool] | None = None


def flush_logs() -> None:
    """Write out the lines held (tests read the log right after a request)."""
    if _chain is not None:
        _chain[1].flush()


atexit.register(flush_logs)


@contextlib.asynccontextmanager
async def logs_written(_: object) -> AsyncIterator[None]:
    """An app lifespan, entered first and left last: what the log holds is written once
    the app has stopped, before uvicorn re-raises a SIGTERM it caught (the process then
    ends with no exit handlers)."""
    try:
        yield
    finally:
        flush_logs()


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


CORE_FIELDS = (
    "campaign_id batch_id recipients retried reason error_type error lane seconds"
    " account_id digest leads messages events campaign_recipients import_errors suppressions"
    " idempotency_claims message_events recipients_unlinked job_log import_files"
    " action_members batches longest_batch_ms took_s"
)


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
    flush_logs()  # what an earlier set-up holds
    buffer = LineBuffer(sys.stderr)
    _chain = (tuple(processors), buffer, numeric <= logging.INFO)
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=lambda *_: buffer,
        cache_logger_on_first_use=True,
    )

    handler = LineHandler(buffer)
    # The ``extra`` fields the core names (it logs through the stdlib); only those:
    # libraries put others there (uvicorn its colored text).
    extra = structlog.stdlib.ExtraAdder(CORE_FIELDS.split())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, extra, *shared],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    for noisy in ("uvicorn.access", "httpx", "httpcore", "aiosqlite", "asyncio", "piccolo"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
