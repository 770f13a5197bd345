"""Bulk actions on a segment: asked for (checked, stored, queued), counted without doing
anything (a dry run), shown with their progress, and run by a background job that any
server can run, and resume."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from collections.abc import Callable
from datetime import datetime

from leadmail.domain.clock import Clock, utc_now
from leadmail.domain.lead_actions import (
    GAVE_UP,
    MAX_ATTEMPTS,
    ActionBatch,
    ActionNotFound,
    ActionOrder,
    ActionOutcome,
    ActionStatus,
    LeadAction,
    new_action_id,
)
from leadmail.ports.errors import StorageUnavailable
from leadmail.ports.jobs import JobQueue
from leadmail.ports.lead_actions import LeadActionRepository
from leadmail.ports.leads import LeadRepository
from leadmail.services.resuming import keep_resuming

ACTION_JOB = "lead_action"
RETRIES = 5  # of a run that lost the database, resuming from its last batch each time

log = logging.getLogger("leadmail.lead_actions")
Progress = Callable[[LeadAction], None]


class Lost(Exception):
    """The action was taken over by another runner: this one stops."""


class LeadActions:
    """Start bulk actions, count what they would touch, show them, and run them (the
    job)."""

    def __init__(
        self,
        actions: LeadActionRepository,
        leads: LeadRepository,
        jobs: JobQueue,
        clock: Clock = utc_now,
        *,
        parallel: int = 1,
        retry_pause: float = 2.0,
    ) -> None:
        """``parallel``: batches applied at once (each on a connection of its own: on
        Postgres, 2 took half the time of 1 on two cores; on SQLite, one writer, 1)."""
        self._actions = actions
        self._leads = leads
        self._jobs = jobs
        self._clock = clock
        self._parallel = max(1, parallel)
        self._retry_pause = retry_pause

    def now(self) -> datetime:
        """The service's clock (an action's ``eta_seconds`` is reckoned from it)."""
        return self._clock()

    async def count(self, account_id: str, order: ActionOrder) -> int:
        """A dry run: how many leads the action would touch if it started now."""
        return await self._leads.count(account_id, order.segment)

    async def start(
        self, account_id: str, order: ActionOrder, *, enqueue: bool = True
    ) -> LeadAction:
        """Store the action and queue its job (``enqueue``: False when the caller runs
        it)."""
        now = self._clock()
        action = LeadAction(
            new_action_id(),
            account_id,
            order.kind,
            order.tags,
            order.segment,
            ActionStatus.QUEUED,
            now,
            now,
        )
        await self._actions.create(action)
        if enqueue:
            await self._jobs.enqueue(ACTION_JOB, action.action_id)
        return action

    async def get(self, account_id: str, action_id: str) -> LeadAction:
        found = await self._actions.get(account_id, action_id)
        if found is None:
            raise ActionNotFound(action_id)
        return found

    async def resume_unfinished(self, idle_for: float = 0.0) -> int:
        """Queue again every action left queued or running (a server stopped mid-way)
        that has not moved for ``idle_for`` seconds. Returns how many."""
        now = self._clock()
        found = [
            action
            for action in await self._actions.unfinished()
            if (now - action.updated_at).total_seconds() >= idle_for
        ]
        for action in found:
            await self._jobs.enqueue(ACTION_JOB, action.action_id)
        return len(found)

    async def keep_resuming(self, idle_for: float = 120.0, every: float = 60.0) -> None:
        """Forever: queue again the actions that have not moved for ``idle_for`` seconds
        (a command-line action killed while the servers run). Cancel it to stop."""
        await keep_resuming(self.resume_unfinished, "lead_actions", idle_for, every)

    async def stop(self, action_id: str, reason: str) -> None:
        """Mark the action failed with ``reason`` (its runner was stopped for good: a
        command-line action interrupted); the leads it counted were changed."""
        await self._actions.finish(action_id, "", self._clock(), error=reason)

    async def run_job(self, action_id: str) -> None:
        """The job queue's handler (``run``, its result dropped)."""
        await self.run(action_id)

    async def run(self, action_id: str, progress: Progress | None = None) -> LeadAction | None:
        """The job: the action worked through from where it stands, to ``done``. None
        when another runner took it over, or it was already finished."""
        runner = secrets.token_hex(8)
        for attempt in range(1, RETRIES + 1):
            try:
                return await self._attempt(action_id, runner, progress)
            except Lost:
                return None
            except StorageUnavailable:
                if attempt == RETRIES:
                    raise
                log.warning("lead_action_paused_storage_unavailable")
                await asyncio.sleep(self._retry_pause * attempt)
            except Exception as e:  # a bug: never left running
                reason = f"stopped by an internal error ({type(e).__name__})"
                await self._actions.finish(action_id, runner, self._clock(), error=reason)
                raise
        return None  # (unreachable)

    async def _attempt(
        self, action_id: str, runner: str, progress: Progress | None
    ) -> LeadAction | None:
        action = await self._actions.claim(action_id, runner, self._clock())
        if action is None:
            return None
        if action.attempts > MAX_ATTEMPTS:  # it keeps stopping the runs: no more
            return await self._actions.finish(action_id, runner, self._clock(), error=GAVE_UP)
        action = await self._actions.freeze(action_id, runner, self._clock())
        if action is None or action.total is None:
            raise Lost()
        if progress is not None:
            progress(action)
        batches = await self._actions.remaining(action_id)
        for first in range(0, len(batches), self._parallel):
            group = batches[first : first + self._parallel]
            now = self._clock()
            answers = await asyncio.gather(
                *(self._actions.apply(ActionBatch(action, runner, s, e, now)) for s, e in group),
                return_exceptions=True,
            )
            for answer in answers:  # each one finished: then the first failure, if any
                if isinstance(answer, BaseException):
                    raise answer
            for (start, end), outcome in zip(group, answers, strict=True):
                if outcome is None:
                    raise Lost()
                assert isinstance(outcome, ActionOutcome)
                if outcome.applied:
                    action = dataclasses.replace(
                        action,
                        done=action.done + (end - start),
                        changed=action.changed + outcome.changed,
                        skipped=action.skipped + outcome.skipped,
                        failed=action.failed + outcome.failed,
                        updated_at=now,
                    )
            if progress is not None:
                progress(action)
            await asyncio.sleep(0)  # let requests in
        finished = await self._actions.finish(action_id, runner, self._clock())
        if finished is None:
            raise Lost()
        return finished
