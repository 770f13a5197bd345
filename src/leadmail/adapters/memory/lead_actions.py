"""Bulk actions in dicts, applied to a MemoryLeadRepository's leads: one process."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from leadmail.adapters.memory.lead_events import MemoryLeadEventRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.domain.lead_actions import (
    ACTION_BATCH,
    ActionBatch,
    ActionKind,
    ActionOutcome,
    ActionStatus,
    LeadAction,
    plan,
)
from leadmail.ports.lead_actions import LeadActionRepository


class MemoryLeadActionRepository(LeadActionRepository):
    def __init__(
        self,
        leads: MemoryLeadRepository,
        events: MemoryLeadEventRepository,
        *,
        batch: int = ACTION_BATCH,
    ) -> None:
        """``batch``: leads per frozen batch."""
        self._leads = leads
        self._events = events
        self._batch = batch
        self._actions: dict[str, LeadAction] = {}
        self._frozen: dict[str, list[str]] = {}  # lead ids by position - 1
        self._applied: dict[str, set[int]] = {}  # the starts of the batches applied

    async def create(self, action: LeadAction) -> None:
        self._actions[action.action_id] = action

    async def get(self, account_id: str, action_id: str) -> LeadAction | None:
        found = self._actions.get(action_id)
        return found if found is not None and found.account_id == account_id else None

    async def claim(self, action_id: str, runner: str, now: datetime) -> LeadAction | None:
        found = self._actions.get(action_id)
        if found is None or found.status.finished:
            return None
        return self._set(
            action_id,
            None,
            status=ActionStatus.RUNNING,
            runner=runner,
            attempts=found.attempts + (found.runner != runner),
            started_at=found.started_at or now,
            updated_at=now,
        )

    async def freeze(self, action_id: str, runner: str, now: datetime) -> LeadAction | None:
        found = self._actions.get(action_id)
        if found is None or found.runner != runner or found.status is not ActionStatus.RUNNING:
            return None
        if found.total is not None:
            return found
        members = sorted(
            (
                lead
                for lead in self._leads.all_of(found.account_id)
                if lead.created_at <= found.created_at and found.segment.matches(lead)
            ),
            key=lambda lead: (lead.created_at, lead.lead_id),
        )
        self._frozen[action_id] = [lead.lead_id for lead in members]
        self._applied[action_id] = set()
        return self._set(action_id, runner, total=len(members), updated_at=now)

    async def remaining(self, action_id: str) -> list[tuple[int, int]]:
        total = len(self._frozen.get(action_id, []))
        applied = self._applied.get(action_id, set())
        return [
            (start, min(start + self._batch, total))
            for start in range(0, total, self._batch)
            if start not in applied
        ]

    async def apply(self, batch: ActionBatch) -> ActionOutcome | None:
        action = batch.action
        found = self._actions.get(action.action_id)
        if found is None or found.runner != batch.runner:
            return None
        if found.status is not ActionStatus.RUNNING:
            return None
        applied = self._applied.setdefault(action.action_id, set())
        if batch.start in applied:
            return ActionOutcome(applied=False)
        applied.add(batch.start)
        ids = self._frozen.get(action.action_id, [])[batch.start : batch.end]
        stored = [
            lead
            for lead_id in ids
            if (lead := await self._leads.get(action.account_id, lead_id)) is not None
        ]
        planned = plan(batch, stored)
        for lead in planned.leads:
            if action.kind is ActionKind.DELETE:
                await self._leads.delete(lead.account_id, lead.lead_id)
            else:
                self._leads.put(lead)
        await self._events.add(planned.events)
        outcome = planned.outcome
        self._set(
            action.action_id,
            batch.runner,
            done=found.done + (batch.end - batch.start),
            attempts=0,
            changed=found.changed + outcome.changed,
            skipped=found.skipped + outcome.skipped,
            failed=found.failed + outcome.failed,
            updated_at=batch.now,
        )
        return outcome

    async def finish(
        self, action_id: str, runner: str, now: datetime, error: str | None = None
    ) -> LeadAction | None:
        status = ActionStatus.DONE if error is None else ActionStatus.FAILED
        found = self._actions.get(action_id)
        if found is None or found.status.finished:
            return None
        finished = self._set(
            action_id, runner or None, status=status, error=error or "", finished_at=now,
            updated_at=now,
        )  # fmt: skip
        if finished is not None:
            self._frozen.pop(action_id, None)
            self._applied.pop(action_id, None)
        return finished

    async def unfinished(self) -> list[LeadAction]:
        waiting = [a for a in self._actions.values() if not a.status.finished]
        return sorted(waiting, key=lambda a: (a.created_at, a.action_id))

    def _set(self, action_id: str, owner: str | None, **changes: Any) -> LeadAction | None:
        found = self._actions.get(action_id)
        if found is None or (owner is not None and found.runner != owner):
            return None
        changed = replace(found, **changes)
        self._actions[action_id] = changed
        return changed
