"""The ``leadmail`` command. Logs go to stderr; stdout carries only each command's output."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Sequence

import msgspec
import structlog

from leadmail.bootstrap import DEMO_ACCOUNT, Adapters, ensure_demo_key, wire
from leadmail.cli import accounts, campaigns, keys, leads, purge, users, worker
from leadmail.cli.failures import failure_of
from leadmail.cli.hints import command_line
from leadmail.collector import settle_collector
from leadmail.config import Settings
from leadmail.logs import configure_logging
from leadmail.preflight import check_start
from leadmail.services.registry import Services

log = structlog.get_logger("leadmail.cli")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
        configure_logging(settings.log_format, settings.log_level)
        result: int = args.run(settings, args)
        return result
    except Exception as e:  # one line and an exit code for every known failure
        failure = failure_of(e)
        if failure is None:
            raise
        print(failure.line, file=sys.stderr)
        return failure.exit_code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="leadmail", description="Email and leads service for course businesses."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve the HTTP API")
    serve.add_argument("--host", help="interface to bind (default: LEADMAIL_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: LEADMAIL_PORT or 8000)")
    serve.add_argument(
        "--no-worker",
        action="store_true",
        help="run no job worker in this process: `leadmail worker` processes send campaigns"
        " and run imports (Postgres only)",
    )
    serve.add_argument(
        "--processes",
        type=int,
        metavar="N",
        help="HTTP processes on the one port, each with its job worker unless --no-worker"
        " (default: LEADMAIL_PROCESSES or 1; Postgres only past 1)",
    )
    serve.set_defaults(run=_serve)

    migrate = commands.add_parser("migrate", help="apply pending database migrations")
    migrate.set_defaults(run=_migrate)

    keys.add_commands(commands)
    accounts.add_commands(commands)
    leads.add_commands(commands)
    worker.add_commands(commands)
    campaigns.add_commands(commands)
    purge.add_commands(commands)
    users.add_commands(commands)
    return parser


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn

    # Here, not at the top: the web framework is for `serve`, not for every command.
    from leadmail.adapters.http.connections import connection_protocol
    from leadmail.application import create_app
    from leadmail.cli.serving import (
        GRACEFUL_S,
        StartupSaid,
        connection_limits,
        graceful_server,
        serve_processes,
    )

    host = args.host or settings.host
    port = args.port or settings.port
    if args.no_worker and settings.is_sqlite:
        return worker.refuse_on_sqlite("serve --no-worker")
    settings.require_for("serve")
    asyncio.run(check_start(settings))  # said in one line here, not inside uvicorn's lifespan
    # Public links point where this server listens unless LEADMAIL_PUBLIC_URL says where.
    settings = msgspec.structs.replace(settings, host=host, port=port)
    processes = settings.processes if args.processes is None else args.processes
    if processes < 1:
        print(f"leadmail: --processes must be at least 1, got {processes}", file=sys.stderr)
        return 2
    if processes > 1:
        if settings.is_sqlite:
            print(
                "leadmail: serve --processes needs Postgres: SQLite takes one server"
                " process (set LEADMAIL_DATABASE_URL to a postgresql:// URL)",
                file=sys.stderr,
            )
            return 2
        return serve_processes(settings, processes, no_worker=args.no_worker)

    @contextlib.asynccontextmanager
    async def on_ready(services: Services) -> AsyncIterator[None]:
        if settings.is_sqlite:
            created = await ensure_demo_key(services)
            if created is not None:
                _announce_demo_key(created.secret, host, port)
                _say_how_to_sign_in(settings)
            elif await services.keys.list(DEMO_ACCOUNT):
                _say_how_to_make_a_key()
        log.info("serving", host=host, port=port, database=_database_kind(settings))
        settle_collector()
        yield

    app = StartupSaid(create_app(settings, on_ready=on_ready, run_jobs=not args.no_worker))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=connection_protocol(connection_limits(settings)),
        log_config=None,
        access_log=False,
        server_header=False,
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_S,
    )
    server = graceful_server(config)
    try:
        server.run()
    except SystemExit:  # uvicorn's exit 3 when the start-up failed: said below
        if server.started:
            raise
    if server.started:
        return 0
    if app.failure is not None:  # a known failure after the pre-flight: one line
        print(app.failure.line, file=sys.stderr)
        return app.failure.exit_code
    return 1


def _announce_demo_key(secret: str, host: str, port: int) -> None:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host  # noqa: S104
    print(
        "\nNo API key existed, so an account 'demo' was created with this key"
        " (shown once, keep it):\n\n"
        f"  {secret}\n\n"
        "Try it:\n\n"
        f"  curl -s http://{shown}:{port}/api/v1/leads \\\n"
        f"    -H 'Authorization: Bearer {secret}' \\\n"
        "    -H 'Content-Type: application/json' \\\n"
        """    -d '{"name": "Ada Lovelace", "email": "ada@example.com", "source": "website"}'\n""",
        flush=True,
    )


def _say_how_to_make_a_key() -> None:
    """A later start of a database that began with the demo key: that key is not shown
    again (only its digest is kept), so say how to make another."""
    print(
        "\nAPI keys are shown only once, when they are made. To make another:\n\n"
        f"  {command_line('keys', 'create', '--account', DEMO_ACCOUNT)}\n",
        flush=True,
    )


def _say_how_to_sign_in(settings: Settings) -> None:
    """On the first start of an embedded database: where the dashboard is, and how the
    first user (of the demo account) is made."""
    make = command_line("users", "create", "--account", DEMO_ACCOUNT, "--email", "you@example.com")
    print(
        f"\nThe dashboard is at {settings.link_base()}/app/ . To sign in, make yourself a"
        f" user (then open the link it prints to set a password):\n\n  {make}\n",
        flush=True,
    )


def _database_kind(settings: Settings) -> str:
    return "sqlite" if settings.is_sqlite else "postgres"


def _migrate(settings: Settings, _: argparse.Namespace) -> int:
    from leadmail.adapters.db.migrate import migrate

    async def run() -> tuple[list[str], int]:
        adapters = Adapters.from_settings(settings, sending=False)
        adapters.catalog.load()  # a bad template file stops this before the database changes
        async with adapters.opened(apply_migrations=False):
            assert adapters.database is not None
            applied = await migrate(adapters.database)
            templates = await wire(adapters, settings).templates.sync()
            return applied, templates

    applied, templates = asyncio.run(run())
    if applied:
        print(f"Applied {len(applied)} migration(s): {', '.join(applied)}")
    else:
        print("Database is up to date; nothing to apply.")
    print(f"Templates in the catalog: {templates}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
