"""``leadmail leads import``: a CSV file imported into an account from the command line,
by the same service the API runs, in this process, with a progress bar; ``leadmail leads
import-errors``: every row an import did not take; ``tag``, ``untag`` and ``delete``: a
bulk action on a segment (lead_actions.py)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from leadmail.bootstrap import Adapters, wire
from leadmail.cli import lead_actions
from leadmail.cli.accounts import UsageError, account_adapters, account_id_of
from leadmail.cli.hints import command_line
from leadmail.cli.progress import Bar
from leadmail.config import Settings
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_imports import ImportMode, ImportStatus, LeadImport, RowError
from leadmail.domain.tags import tag_list
from leadmail.services.lead_imports import ImportOptions

READ_BYTES = 1 << 20
SHOWN_ERRORS = 10  # failed rows printed after the summary
ERRORS_PAGE = 100  # failed rows read at a time by `import-errors`

# Exit codes: 0 the import is done (rows it could not take are listed), 1 it failed,
# 2 it could not start (no such file or account, a bad header, bad options).


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    leads = commands.add_parser("leads", help="leads in bulk").add_subparsers(
        dest="leads_command", required=True, metavar="ACTION"
    )
    command = leads.add_parser(
        "import",
        help="import leads from a CSV file into an account",
        description="Exit codes: 0 done (rows not imported are listed), 1 the import failed,"
        " 2 it could not start (file, account, header or options).",
    )
    command.add_argument("file", help="a CSV file (UTF-8; header row with an email column)")
    command.add_argument("--account", required=True, help="the account's name")
    command.add_argument("--mode", choices=[m.value for m in ImportMode], default="upsert")
    command.add_argument("--tags", default="", help="comma-separated tags for every lead")
    command.set_defaults(run=run_import)
    errors = leads.add_parser(
        "import-errors",
        help="every row an import did not take (failed or skipped), and why",
        description="Exit codes: 0 listed, 1 no such import in the account, 2 no such account.",
    )
    errors.add_argument("import_id")
    errors.add_argument("--account", required=True, help="the account's name")
    errors.set_defaults(run=run_import_errors)
    lead_actions.add_commands(leads)


INTERRUPTED = "interrupted at the command line; the rows counted were written"


def run_import(settings: Settings, args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        if not path.is_file():
            raise UsageError(f"no such file: {path}")
        finished = asyncio.run(_import(settings, args, path))
    except UsageError as e:
        print(f"leadmail: {e}", file=sys.stderr)
        return 2
    _summary(finished)
    return 0 if finished.status is ImportStatus.DONE else 1


async def _import(settings: Settings, args: argparse.Namespace, path: Path) -> LeadImport:
    try:
        tags = tag_list([t for t in args.tags.split(",") if t.strip()], "tags")
    except ValidationFailed as e:
        raise UsageError(f"--tags: {e.errors[0].field} {e.errors[0].message}") from e
    adapters = account_adapters(settings, args.account)
    async with adapters.opened(apply_migrations=settings.migrate_on_start):
        services = wire(adapters, settings)
        account_id = await account_id_of(services, args.account)
        options = ImportOptions(ImportMode(args.mode), tags)
        try:
            started = await services.imports.start(account_id, options, _read(path), enqueue=False)
        except ValidationFailed as e:
            raise UsageError(f"{path.name}: cannot import: {e.described}") from e
        bar = Bar("rows")
        try:
            finished = await services.imports.run(
                started.import_id, lambda lead_import: bar.show(lead_import.rows, lead_import.total)
            )
        except BaseException:
            await asyncio.shield(services.imports.stop(started.import_id, INTERRUPTED))
            raise
        finally:
            bar.close()
        if finished is None:  # taken over by a server's worker; it carries on there
            finished = await services.imports.get(account_id, started.import_id)
        errors, _ = await services.imports.errors(
            finished.account_id, finished.import_id, 0, SHOWN_ERRORS
        )
        for error in errors:
            print(_row_line(error), file=sys.stderr)
        more = finished.failed + finished.skipped - len(errors)
        if more > 0:
            every = command_line(
                "leads", "import-errors", finished.import_id, "--account", args.account
            )
            print(f"... and {more} more rows not imported; all of them: {every}", file=sys.stderr)
        return finished


def _row_line(error: RowError) -> str:
    email = f" ({error.email})" if error.email else ""
    return f"row {error.row}{email}: {error.field}: {error.message}"


def run_import_errors(settings: Settings, args: argparse.Namespace) -> int:
    try:
        asyncio.run(_import_errors(settings, args))
    except UsageError as e:
        print(f"leadmail: {e}", file=sys.stderr)
        return 2
    return 0


async def _import_errors(settings: Settings, args: argparse.Namespace) -> None:
    """Every error row of the import, by row, on stdout (a page read at a time)."""
    adapters = Adapters.from_settings(settings, create=False, sending=False)
    async with adapters.opened(apply_migrations=settings.migrate_on_start):
        services = wire(adapters, settings)
        account_id = await account_id_of(services, args.account)
        after: int | None = 0
        while after is not None:
            rows, after = await services.imports.errors(
                account_id, args.import_id, after, ERRORS_PAGE
            )
            for error in rows:
                print(_row_line(error))


async def _read(path: Path) -> AsyncIterator[bytes]:
    with path.open("rb") as file:
        while data := file.read(READ_BYTES):
            yield data


def _summary(done: LeadImport) -> None:
    print(
        f"Import {done.import_id}: {done.status.value}; {done.rows} rows: {done.created} created,"
        f" {done.updated} updated, {done.skipped} skipped, {done.failed} failed."
    )
    if done.error:
        print(f"Stopped: {done.error}")
