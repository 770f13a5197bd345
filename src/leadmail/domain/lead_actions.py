"""Bulk actions on a segment: tags added to, or taken off, every lead of a segment, or the
segment's leads deleted, in the background. The set of leads is frozen when the action
starts to run (the segment as it is then, among the leads created before it was asked
for), then worked through in batches that each commit their progress, so a run that
stops resumes where the last batch left it and no lead is changed twice."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from leadmail.domain.errors import DomainError, FieldError, ValidationFailed
from leadmail.domain.ids import id_rule, new_id
from leadmail.domain.lead_timeline import LeadEvent, LeadEventKind
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter
from leadmail.domain.tags import MAX_TAGS, TagChange, Tags, tag_list, tags_of

ACTION_ID_PREFIX = "act_"
ACTION_ID = id_rule(ACTION_ID_PREFIX)
ACTION_BATCH = 5_000  # leads changed (and progress committed) together
# Runs of one action that may end with no batch written (the process stopped each time)
# before it is failed instead of run again: as an import's.
MAX_ATTEMPTS = 3
GAVE_UP = (
    f"stopped after {MAX_ATTEMPTS} runs in a row ended without a batch written (the server"
    " stopped or died each time); the leads counted were changed"
)
TAGS_NOT_USED = "is not used by the action delete"
TAGS_NEEDED = "must hold at least one tag for this action"


def new_action_id() -> str:
    return new_id(ACTION_ID_PREFIX)


class ActionKind(enum.StrEnum):
    ADD_TAGS = "add_tags"
    REMOVE_TAGS = "remove_tags"
    DELETE = "delete"


class ActionStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"

    @property
    def finished(self) -> bool:
        return self in (ActionStatus.DONE, ActionStatus.FAILED)


class ActionNotFound(DomainError):
    """No bulk action with that id in the caller's account (another account's included)."""

    code = "ACTION_NOT_FOUND"

    def __init__(self, action_id: str) -> None:
        super().__init__(f"Bulk action {action_id!r} was not found")
        self.action_id = action_id


@dataclass(frozen=True, slots=True)
class ActionOrder:
    """What a client asked for, checked: the action, its tags (none for a delete) and the
    segment (a campaign's audience, LeadFilter.from_json)."""

    kind: ActionKind
    tags: Tags
    segment: LeadFilter

    @classmethod
    def parse(
        cls, action: str, tags: Sequence[str] | None, segment: Mapping[str, object]
    ) -> ActionOrder:
        """Raises ValidationFailed naming each broken field: ``action``, ``tags`` (or
        ``tags[i]``), ``filter.<name>``."""
        errors: list[FieldError] = []
        kind: ActionKind | None = None
        try:
            kind = ActionKind(action)
        except ValueError:
            kinds = ", ".join(k.value for k in ActionKind)
            errors.append(FieldError("action", f"must be one of {kinds}"))
        checked: Tags = ()
        if kind is ActionKind.DELETE and tags is not None:
            errors.append(FieldError("tags", TAGS_NOT_USED))
        elif kind is not None and kind is not ActionKind.DELETE and not tags:
            errors.append(FieldError("tags", TAGS_NEEDED))
        elif tags:
            try:
                checked = tag_list(tags, "tags")
            except ValidationFailed as e:
                errors.extend(e.errors)
        found = LeadFilter()
        try:
            found = LeadFilter.from_json(segment)
        except ValidationFailed as e:
            errors.extend(FieldError(f"filter.{f.field}", f.message) for f in e.errors)
        if errors or kind is None:
            raise ValidationFailed(errors)
        return cls(kind, checked, found)


@dataclass(frozen=True, slots=True)
class LeadAction:
    """One bulk action. ``total`` is the number of leads frozen when it started (None
    before); ``done`` counts those worked through (the position a resumed run starts
    from): ``changed`` by it, ``skipped`` (nothing to change, or deleted meanwhile) and
    ``failed`` (it would have given the lead more than MAX_TAGS tags)."""

    action_id: str
    account_id: str
    kind: ActionKind
    tags: Tags
    segment: LeadFilter
    status: ActionStatus
    created_at: datetime
    updated_at: datetime
    total: int | None = None
    done: int = 0
    changed: int = 0
    skipped: int = 0
    failed: int = 0
    started_at: datetime | None = None
    finished_at: datetime | None = None
    error: str = ""  # why a failed action stopped
    runner: str = ""  # who runs it now: a batch of anyone else is refused
    attempts: int = 0  # runners that took it since its last batch was written

    @property
    def left(self) -> int | None:
        return None if self.total is None else self.total - self.done

    @property
    def change(self) -> TagChange:
        """The tag change each lead gets (none for a delete)."""
        if self.kind is ActionKind.ADD_TAGS:
            return TagChange(add=self.tags)
        if self.kind is ActionKind.REMOVE_TAGS:
            return TagChange(remove=self.tags)
        return TagChange()

    def eta_seconds(self, now: datetime) -> int | None:
        """Seconds left at the pace so far, while running with leads done."""
        if self.status is not ActionStatus.RUNNING or self.started_at is None:
            return None
        if not self.done or self.total is None:
            return None
        elapsed = (now - self.started_at).total_seconds()
        return max(0, round(elapsed / self.done * (self.total - self.done)))


@dataclass(frozen=True, slots=True)
class ActionBatch:
    """The frozen leads at positions ``start`` < p <= ``end`` (1-based, oldest first), one
    of the batches the store froze them in, changed together with the progress they make:
    all of it or none of it lands, and only once. Refused (nothing written) unless the
    action is still ``runner``'s."""

    action: LeadAction
    runner: str
    start: int
    end: int
    now: datetime


@dataclass(frozen=True, slots=True)
class ActionOutcome:
    changed: int = 0
    skipped: int = 0
    failed: int = 0
    applied: bool = True  # False: the batch was applied before (by this runner or another)


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """What a batch writes, given the frozen leads still stored: the leads as changed (or
    to delete), their timeline events, and the counts."""

    leads: list[Lead]
    events: list[LeadEvent]
    outcome: ActionOutcome = field(default_factory=ActionOutcome)


def plan(batch: ActionBatch, stored: Sequence[Lead]) -> BatchPlan:
    """``stored``: the batch's frozen leads that are still stored. (The stores that apply a
    batch in one SQL statement do the same there.)"""
    action = batch.action
    gone = (batch.end - batch.start) - len(stored)
    if action.kind is ActionKind.DELETE:
        return BatchPlan(list(stored), [], ActionOutcome(len(stored), gone, 0))
    change = action.change
    changed: list[Lead] = []
    failed = 0
    for lead in stored:
        tags = tags_of(t for t in (*lead.tags, *change.add) if t not in change.remove)
        if tags == lead.tags:
            continue
        if len(tags) > MAX_TAGS:
            failed += 1
            continue
        changed.append(replace(lead, tags=tags, updated_at=batch.now))
    events = [tags_event(lead, action, batch.now) for lead in changed]
    skipped = gone + len(stored) - len(changed) - failed
    return BatchPlan(changed, events, ActionOutcome(len(changed), skipped, failed))


def tags_event(lead: Lead, action: LeadAction, at: datetime) -> LeadEvent:
    """A lead's ``tags_changed`` event by a bulk action: its change, and which action."""
    return LeadEvent(
        lead.account_id,
        lead.lead_id,
        LeadEventKind.TAGS_CHANGED,
        at,
        event_detail(action),
    )


def event_detail(action: LeadAction) -> dict[str, object]:
    change = action.change
    return {"add": list(change.add), "remove": list(change.remove), "action_id": action.action_id}
