"""``leadmail serve --processes N`` (N > 1): N HTTP processes on one port, each with its
own app, pools and (unless --no-worker) job worker, under uvicorn's process supervisor.

The supervisor starts each process afresh (multiprocessing's spawn), so what a process
needs comes from the environment, as any other leadmail process's does: its settings
(LEADMAIL_*), whether it runs a job worker (NO_WORKER_ENV), and where it writes its
figures for GET /metrics (PROMETHEUS_MULTIPROC_DIR, a folder made for this run and removed
after it). ``app`` and ``HttpProtocol`` are what uvicorn imports in each process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator
from types import FrameType
from typing import Any

import structlog
from litestar import Litestar

from leadmail.adapters.http.connections import ConnectionLimits, connection_protocol
from leadmail.adapters.http.metrics import MULTIPROCESS_DIR
from leadmail.application import create_app
from leadmail.cli.failures import Failure, failure_of
from leadmail.collector import settle_collector
from leadmail.config import Settings
from leadmail.logs import configure_logging
from leadmail.services.registry import Services

NO_WORKER_ENV = "LEADMAIL_SERVE_NO_WORKER"  # set by serve for its processes: "1" or unset
GRACEFUL_S = 30  # a stopping process finishes its requests (and sends) within this

log = structlog.get_logger("leadmail.cli")


def connection_limits(settings: Settings) -> ConnectionLimits:
    return ConnectionLimits(
        max_connections=settings.max_connections,
        header_timeout=settings.header_timeout_seconds,
        body_idle=settings.body_idle_seconds,
    )


# Made when uvicorn imports this module in each process, from that process's settings.
HttpProtocol = connection_protocol(connection_limits(Settings.from_env()))


def app() -> Litestar:
    """One process's app (uvicorn's factory)."""
    settings = Settings.from_env()
    configure_logging(settings.log_format, settings.log_level)

    @contextlib.asynccontextmanager
    async def on_ready(_: Services) -> AsyncIterator[None]:
        log.info("serving", host=settings.host, port=settings.port, pid=os.getpid())
        settle_collector()
        try:
            yield
        finally:
            _forget_gauges()

    return create_app(settings, on_ready=on_ready, run_jobs=os.environ.get(NO_WORKER_ENV) != "1")


def _forget_gauges() -> None:
    """This process's live gauges leave the figures (the pool's connections in use)."""
    if os.environ.get(MULTIPROCESS_DIR):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]


class StartupSaid:
    """The app, whose start-up failure, when it is a known one (failure_of: a database
    gone since the pre-flight, a setting), is said once by ``serve`` in one line with its
    exit code, not as the traceback Litestar hands uvicorn to log."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.failure: Failure | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        held: list[Any] = []

        async def holding(message: Any) -> None:
            if message["type"] == "lifespan.startup.failed":
                held.append(message)  # sent once the failure is known (below)
                return
            await send(message)

        try:
            await self.app(scope, receive, holding)
        except BaseException as e:
            if held:
                self.failure = failure_of(e)
                said = "" if self.failure is not None else held[0]["message"]
                await send({**held[0], "message": said})
            raise


def graceful_server(config: Any) -> Any:
    """uvicorn's Server, exiting 0 when stopped by SIGTERM: uvicorn finishes the requests
    in flight (at most GRACEFUL_S), runs the app's shutdown (the job worker stops, the
    campaigns' batches at the provider are recorded, the pools closed), then raises the
    signal again so the process dies of it. A stop asked for is not a failure: the signal
    is not raised again (uvicorn 0.54's ``_captured_signals``; pinned in uv.lock)."""
    import uvicorn

    class GracefulServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            super().handle_exit(sig, frame)
            if sig == signal.SIGTERM and sig in self._captured_signals:
                self._captured_signals.remove(sig)

    return GracefulServer(config)


def serve_processes(settings: Settings, processes: int, *, no_worker: bool) -> int:
    """Serve on ``settings``' host and port with ``processes`` processes until stopped."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    given = os.environ.get(MULTIPROCESS_DIR)  # an operator's folder is kept, and emptied
    folder = given or tempfile.mkdtemp(prefix="leadmail-metrics-")
    os.environ[MULTIPROCESS_DIR] = folder
    os.environ["LEADMAIL_HOST"] = settings.host
    os.environ["LEADMAIL_PORT"] = str(settings.port)
    if no_worker:
        os.environ[NO_WORKER_ENV] = "1"
    try:
        config = uvicorn.Config(
            f"{__name__}:app",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=processes,
            http=f"{__name__}:HttpProtocol",
            log_config=None,
            access_log=False,
            server_header=False,
            lifespan="on",
            timeout_graceful_shutdown=GRACEFUL_S,
        )
        sock = config.bind_socket()
        Multiprocess(config, sockets=[sock]).run()
    finally:
        if not given:
            shutil.rmtree(folder, ignore_errors=True)
    return 0
