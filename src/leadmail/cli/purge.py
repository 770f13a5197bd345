"""``leadmail purge``: what retention removes (services/retention.py), now, in this
process, with a progress bar; then what it removed, kind by kind. The scheduled purge
(LEADMAIL_RETENTION_SCHEDULE) does the same on a worker."""

from __future__ import annotations

import argparse
import asyncio
import json

from leadmail.bootstrap import Adapters, wire
from leadmail.cli.progress import Bar
from leadmail.config import Settings
from leadmail.domain.idempotency import KEEP_FOR
from leadmail.domain.retention import JOB_LOG_KEPT, Purged, PurgeReport


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    purge = commands.add_parser(
        "purge",
        help="remove now what retention removes on its schedule: idempotency claims older"
        " than 24 h, messages and their events older than LEADMAIL_RETENTION_DAYS, the job"
        " log older than 7 days, finished imports' files and old error rows",
        description="Exit codes: 0 done, 1 the database is unavailable, 2 a bad setting.",
    )
    purge.add_argument("--json", action="store_true", help="print the counts as one JSON object")
    purge.set_defaults(run=_purge)


def _purge(settings: Settings, args: argparse.Namespace) -> int:
    bar = Bar("rows")
    removed = 0

    def progress(_: Purged, count: int) -> None:
        nonlocal removed
        removed += count
        bar.show(removed, None)

    async def run() -> PurgeReport:
        # A SQLite file that is not there holds nothing to purge: said, not made.
        adapters = Adapters.from_settings(settings, create=False, sending=False)
        async with adapters.opened(apply_migrations=settings.migrate_on_start):
            return await wire(adapters, settings).retention.purge(progress)

    try:
        report = asyncio.run(run())
    finally:
        bar.close()
    if args.json:
        print(
            json.dumps(
                {
                    **{kind.value: n for kind, n in report.removed.items()},
                    "batches": report.batches,
                    "longest_batch_ms": round(report.longest_batch_s * 1000, 1),
                    "longest_batch_ms_of": {
                        kind.value: round(s * 1000, 1) for kind, s in report.longest_of.items()
                    },
                }
            )
        )
        return 0
    for line in _lines(report, settings.retention_days):
        print(line)
    return 0


def _lines(report: PurgeReport, days: int) -> list[str]:
    kept = f"older than {days} days" if days else "(LEADMAIL_RETENTION_DAYS=0: kept)"
    hours = int(KEEP_FOR.total_seconds() // 3600)
    labels = {
        Purged.CLAIMS: f"idempotency claims older than {hours} h",
        Purged.MESSAGES: f"messages {kept}",
        Purged.EVENTS: "  their provider events",
        Purged.UNLINKED: "  campaign recipients unlinked (status kept)",
        Purged.JOB_LOG: f"job log rows older than {JOB_LOG_KEPT.days} days",
        Purged.IMPORT_FILES: "pieces of finished imports' files",
        Purged.IMPORT_ERRORS: f"import error rows {kept}",
        Purged.ACTION_MEMBERS: "finished bulk actions' lead lists",
    }
    width = max(len(label) for label in labels.values())
    lines = [f"{labels[kind].ljust(width)}  {n:>12,}" for kind, n in report.removed.items()]
    longest = report.longest_batch_s * 1000
    lines.append(
        f"Removed {report.total:,} rows in {report.batches:,} batches"
        f" (the longest {longest:.1f} ms)."
    )
    return lines
