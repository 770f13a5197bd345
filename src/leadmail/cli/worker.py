"""``leadmail worker``: a process that runs the job queue's work (campaigns, imports) and
serves no HTTP, beside ``leadmail serve --no-worker`` (or any number of servers) on one
Postgres. SIGTERM (or Ctrl-C): no new batch, the batches at the provider answered and
recorded, then exit 0; what is left is taken up by the other workers, or on restart."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

import structlog

from leadmail.background import running_jobs
from leadmail.bootstrap import Adapters, wire
from leadmail.collector import settle_collector
from leadmail.config import Settings
from leadmail.preflight import check_start

log = structlog.get_logger("leadmail.cli")


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = commands.add_parser(
        "worker",
        help="run campaigns and imports, with no HTTP (Postgres only)",
        description="Exit codes: 0 stopped by SIGTERM or Ctrl-C, 2 on SQLite (campaigns and"
        " imports run inside `leadmail serve` there).",
    )
    command.set_defaults(run=run_worker)


def refuse_on_sqlite(what: str) -> int:
    print(
        f"leadmail: `{what}` needs Postgres: on SQLite, campaigns and imports run inside"
        " `leadmail serve`",
        file=sys.stderr,
    )
    return 2


def run_worker(settings: Settings, _: argparse.Namespace) -> int:
    if settings.is_sqlite:
        return refuse_on_sqlite("worker")
    settings.require_for("worker")
    asyncio.run(check_start(settings))
    asyncio.run(_work(settings))
    return 0


async def _work(settings: Settings) -> None:
    adapters = Adapters.from_settings(settings)
    async with adapters.opened(apply_migrations=settings.migrate_on_start):
        services = wire(adapters, settings)
        await services.templates.sync()
        await services.unsubscribes.ready()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        async with running_jobs(adapters.jobs, services, shared=True):
            settle_collector()
            log.info("worker_started")
            await stop.wait()
            log.info("worker_stopping")
        log.info("worker_stopped")
