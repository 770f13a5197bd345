"""structlog set-up: JSON lines for machines, colours for people, always on stderr.

stdout belongs to the CLI's own output. Library logs (uvicorn, asyncpg, piccolo) go
through the same renderer so every line has one shape.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from leadmail.config import LogFormat


def configure_logging(fmt: LogFormat, level: str = "INFO") -> None:
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
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
        renderer = structlog.processors.JSONRenderer()
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
