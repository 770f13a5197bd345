"""Retention: what is kept for a while removed once its time is past (domain/retention.py),
by the scheduled job of whichever worker the schedule falls to, and by `leadmail purge`.

Each kind goes in batches, each one short transaction of the store's; the batch's size
follows how long the last one took (``BatchSize``), aiming at half of the 100 ms that one
may hold its rows, and the loop yields between batches so that the process's other work
(requests, sends, webhooks) goes on meanwhile."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.retention import (
    BatchSize,
    MessageBatch,
    Purged,
    PurgeReport,
    RetentionPolicy,
)
from leadmail.ports.retention import RetentionStore

RETENTION_JOB = "retention.purge"
log = logging.getLogger("leadmail.retention")

# Where each kind's batches start, and their bounds: rows of one kind (claims, log rows,
# error rows), messages (each with its events, addresses and recipient), pieces of
# import files (up to 1 MiB each), and rows of frozen lead ids (5,000 ids each). The
# largest are kept to about 30 ms on an idle Postgres (bench RP), so that a batch slowed
# twofold or more by the machine (a WAL flush, a checkpoint) stays under 100 ms.
_ROWS = (500, 50, 5_000)
_MESSAGES = (200, 10, 2_000)
_FILES = (8, 1, 64)
_MEMBERS = (20, 1, 500)

Progress = Callable[[Purged, int], None]


class Retention:
    def __init__(
        self, store: RetentionStore, policy: RetentionPolicy, clock: Clock = utc_now
    ) -> None:
        self._store = store
        self._policy = policy
        self._clock = clock

    @property
    def policy(self) -> RetentionPolicy:
        return self._policy

    async def run_job(self, _: str = "") -> None:
        """RETENTION_JOB's handler, and the schedule's."""
        await self.purge()

    async def purge(self, progress: Progress | None = None) -> PurgeReport:
        """Everything older than the policy keeps removed; ``progress`` hears each batch."""
        cutoffs = self._policy.cutoffs(self._clock())
        store = self._store
        report = PurgeReport()
        began = time.perf_counter()

        async def drain(kind: Purged, bounds: tuple[int, int, int], batch: _Batch) -> None:
            size = BatchSize(*bounds)
            while True:
                asked = size.current
                started = time.perf_counter()
                removed = await batch(asked)
                took = time.perf_counter() - started
                report.timed(kind, took)
                report.count(kind, removed)
                if progress is not None and removed:
                    progress(kind, removed)
                if removed < asked:
                    return
                size.after(took)
                await asyncio.sleep(0)  # the process's other work between batches

        await drain(Purged.CLAIMS, _ROWS, lambda n: store.purge_claims(cutoffs.claims, n))
        if cutoffs.messages is not None:
            before = cutoffs.messages
            for account_id in await store.accounts_with_messages(before):

                async def messages(n: int, account_id: str = account_id) -> int:
                    batch = await store.purge_messages(account_id, before, n)
                    self._count_with(report, batch, progress)
                    return batch.messages

                await drain(Purged.MESSAGES, _MESSAGES, messages)
        await drain(Purged.JOB_LOG, _ROWS, lambda n: store.purge_job_log(cutoffs.job_log, n))
        await drain(Purged.IMPORT_FILES, _FILES, store.purge_import_files)
        if cutoffs.messages is not None:
            before = cutoffs.messages
            await drain(Purged.IMPORT_ERRORS, _ROWS, lambda n: store.purge_import_errors(before, n))
        await drain(Purged.ACTION_MEMBERS, _MEMBERS, store.purge_action_members)
        log.info(
            "purged",
            extra={
                **{kind.value: n for kind, n in report.removed.items()},
                "batches": report.batches,
                "longest_batch_ms": round(report.longest_batch_s * 1000, 1),
                "took_s": round(time.perf_counter() - began, 3),
            },
        )
        return report

    @staticmethod
    def _count_with(report: PurgeReport, batch: MessageBatch, progress: Progress | None) -> None:
        """What went with a batch of messages (the messages themselves are drain's)."""
        for kind, n in ((Purged.EVENTS, batch.events), (Purged.UNLINKED, batch.unlinked)):
            report.count(kind, n)
            if progress is not None and n:
                progress(kind, n)


_Batch = Callable[[int], Awaitable[int]]
