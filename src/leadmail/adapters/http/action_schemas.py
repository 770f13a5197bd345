"""Bulk actions on the wire: what a client asks for, an action's progress, and a dry
run's count."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from leadmail.adapters.http.campaign_schemas import AudienceValueOut
from leadmail.adapters.http.timestamps import to_iso, to_iso_or_none
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_actions import ACTION_ID, ActionOrder, LeadAction

ActionId = Annotated[str, msgspec.Meta(pattern=ACTION_ID.pattern)]
ActionKindOut = Literal["add_tags", "remove_tags", "delete"]
ActionStatusOut = Literal["queued", "running", "done", "failed"]


class LeadActionIn(msgspec.Struct, forbid_unknown_fields=True):
    """``filter``: the segment, as a campaign's audience (required: ``{}`` is every
    lead, and says so)."""

    action: str
    filter: dict[str, Any]
    tags: list[str] | msgspec.UnsetType = msgspec.UNSET
    # A boolean (campaign_rules.py), checked here: Litestar converts leniently (0, "true").
    dry_run: Any = False

    def order(self) -> ActionOrder:
        """The order; ValidationFailed naming each broken field (``dry_run`` first)."""
        if not isinstance(self.dry_run, bool):
            raise ValidationFailed.one("dry_run", "must be true or false")
        tags = None if self.tags is msgspec.UNSET else self.tags
        return ActionOrder.parse(self.action, tags, self.filter)


class LeadActionOut(msgspec.Struct):
    id: ActionId
    action: ActionKindOut
    tags: list[str]
    filter: dict[str, AudienceValueOut]
    status: ActionStatusOut
    total: int | None  # the leads frozen when it started to run
    done: int
    left: int | None
    changed: int
    skipped: int
    failed: int
    eta_seconds: int | None
    error: str
    created_at: str
    started_at: str | None
    finished_at: str | None

    @classmethod
    def of(cls, action: LeadAction, now: datetime) -> LeadActionOut:
        return cls(
            id=action.action_id,
            action=action.kind.value,
            tags=list(action.tags),
            filter=action.segment.to_json(),  # type: ignore[arg-type]
            status=action.status.value,
            total=action.total,
            done=action.done,
            left=action.left,
            changed=action.changed,
            skipped=action.skipped,
            failed=action.failed,
            eta_seconds=action.eta_seconds(now),
            error=action.error,
            created_at=to_iso(action.created_at),
            started_at=to_iso_or_none(action.started_at),
            finished_at=to_iso_or_none(action.finished_at),
        )


class LeadActionCountOut(msgspec.Struct):
    """A dry run: the leads the action would touch if it started now; nothing done."""

    dry_run: bool
    action: ActionKindOut
    tags: list[str]
    filter: dict[str, AudienceValueOut]
    total: int

    @classmethod
    def of(cls, order: ActionOrder, total: int) -> LeadActionCountOut:
        return cls(
            dry_run=True,
            action=order.kind.value,
            tags=list(order.tags),
            filter=order.segment.to_json(),  # type: ignore[arg-type]
            total=total,
        )
