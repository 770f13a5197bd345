"""Bulk actions: the order checked (domain/lead_actions.py), a batch planned, the pace
and time left; and the job on the memory adapters: its batches and progress, a runner
that lost it stopping without writing, a run resumed where the last batch left it, a
bug that fails it, and an action whose runs keep dying failed instead of run forever."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.adapters.memory.jobs import InProcessJobQueue
from leadmail.adapters.memory.lead_actions import MemoryLeadActionRepository
from leadmail.adapters.memory.lead_events import MemoryLeadEventRepository
from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_actions import (
    GAVE_UP,
    MAX_ATTEMPTS,
    ActionBatch,
    ActionKind,
    ActionOrder,
    ActionOutcome,
    ActionStatus,
    LeadAction,
    plan,
)
from leadmail.domain.leads import Lead, new_lead_id
from leadmail.domain.segments import LeadFilter
from leadmail.domain.tags import MAX_TAGS
from leadmail.services.lead_actions import LeadActions

ACCOUNT = "acc_bulk"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def a_lead(n: int, tags: tuple[str, ...] = ("march",)) -> Lead:
    at = T0 + timedelta(seconds=n)
    return Lead(new_lead_id(), ACCOUNT, f"Lead {n}", f"lead{n}@example.com",
                f"lead{n}@example.com", "", "", at, at, tags=tags)  # fmt: skip


def fields_of(body: tuple[str, list[str] | None, dict[str, object]]) -> set[str]:
    with pytest.raises(ValidationFailed) as refused:
        ActionOrder.parse(*body)
    return {error.field for error in refused.value.errors}


def test_an_order_is_checked_field_by_field() -> None:
    order = ActionOrder.parse("add_tags", ["VIP ", "vip", "Cohort-B"], {"tag": "march"})
    assert (order.kind, order.tags) == (ActionKind.ADD_TAGS, ("cohort-b", "vip"))
    assert order.segment == LeadFilter(all_tags=("march",))
    assert ActionOrder.parse("delete", None, {}).tags == ()

    assert fields_of(("tag", ["x"], {})) == {"action"}
    assert fields_of(("remove_tags", None, {})) == {"tags"}
    assert fields_of(("remove_tags", [], {})) == {"tags"}
    assert fields_of(("delete", [], {})) == {"tags"}  # even empty: a delete takes none
    assert fields_of(("add_tags", ["ok", "no/slash"], {})) == {"tags[1]"}
    assert fields_of(("add_tags", [f"t{n}" for n in range(MAX_TAGS + 1)], {})) == {"tags"}
    # Every broken field at once, the filter's by their names.
    assert fields_of(("nope", None, {"colour": "red", "created_after": "x"})) == {
        "action", "filter.colour", "filter.created_after",
    }  # fmt: skip


def action_of(kind: ActionKind, tags: tuple[str, ...] = ("cohort-b",)) -> LeadAction:
    return LeadAction("act_x", ACCOUNT, kind, tags, LeadFilter(), ActionStatus.RUNNING, T0, T0)


def test_a_batch_changes_only_what_needs_it() -> None:
    now = T0 + timedelta(hours=1)
    has_it, plain = a_lead(1, ("cohort-b", "march")), a_lead(2)
    full = a_lead(3, tuple(f"t{n:02d}" for n in range(MAX_TAGS)))
    add = action_of(ActionKind.ADD_TAGS)

    planned = plan(ActionBatch(add, "r", 0, 4, now), [has_it, plain, full])  # one gone

    assert planned.outcome == ActionOutcome(changed=1, skipped=2, failed=1)
    assert planned.leads == [replace(plain, tags=("cohort-b", "march"), updated_at=now)]
    assert [(e.lead_id, dict(e.detail)) for e in planned.events] == [
        (plain.lead_id, {"add": ["cohort-b"], "remove": [], "action_id": "act_x"})
    ]
    remove = plan(ActionBatch(action_of(ActionKind.REMOVE_TAGS, ("march",)), "r", 0, 3, now),
                  [has_it, plain, full])  # fmt: skip
    assert remove.outcome == ActionOutcome(changed=2, skipped=1, failed=0)
    assert [lead.tags for lead in remove.leads] == [("cohort-b",), ()]
    delete = plan(ActionBatch(action_of(ActionKind.DELETE, ()), "r", 0, 3, now), [plain])
    assert (delete.leads, delete.events, delete.outcome) == ([plain], [], ActionOutcome(1, 2, 0))


def test_the_time_left_is_at_the_pace_so_far_while_running() -> None:
    running = replace(action_of(ActionKind.DELETE, ()), started_at=T0, total=1_000, done=250)

    assert running.eta_seconds(T0 + timedelta(seconds=10)) == 30
    assert running.left == 750
    assert replace(running, done=0).eta_seconds(T0 + timedelta(seconds=10)) is None
    assert replace(running, status=ActionStatus.DONE).eta_seconds(T0) is None
    assert replace(running, total=None).left is None


class Stores:
    def __init__(self, count: int, batch: int = 100) -> None:
        self.leads = MemoryLeadRepository()
        self.events = MemoryLeadEventRepository(self.leads)
        self.actions = MemoryLeadActionRepository(self.leads, self.events, batch=batch)
        for n in range(count):
            self.leads.put(a_lead(n))

    def service(self, parallel: int = 1) -> LeadActions:
        clock = iter(T0 + timedelta(days=1, seconds=n) for n in range(1_000_000))
        return LeadActions(self.actions, self.leads, InProcessJobQueue(), lambda: next(clock),
                           parallel=parallel, retry_pause=0)  # fmt: skip

    async def tags(self) -> set[tuple[str, ...]]:
        return {lead.tags for lead in self.leads.all_of(ACCOUNT)}


ADD = ActionOrder.parse("add_tags", ["cohort-b"], {"tag": "march"})


async def test_the_job_works_through_the_leads_in_batches_with_its_progress() -> None:
    stores = Stores(250)
    service = stores.service()
    action = await service.start(ACCOUNT, ADD, enqueue=False)
    seen: list[tuple[int | None, int]] = []

    done = await service.run(action.action_id, lambda a: seen.append((a.total, a.done)))

    assert done is not None
    assert (done.status, done.total, done.done, done.changed) == (ActionStatus.DONE, 250, 250, 250)
    assert seen == [(250, 0), (250, 100), (250, 200), (250, 250)]
    assert await stores.tags() == {("cohort-b", "march")}
    assert await service.run(action.action_id) is None  # finished: nothing more to do


async def test_batches_run_two_at_a_time_when_asked() -> None:
    stores = Stores(450)
    service = stores.service(parallel=2)
    action = await service.start(ACCOUNT, ADD, enqueue=False)
    seen: list[int] = []

    done = await service.run(action.action_id, lambda a: seen.append(a.done))

    assert done is not None
    assert (done.done, done.changed) == (450, 450)
    assert seen == [0, 200, 400, 450]  # a progress after each pair of batches
    assert await stores.tags() == {("cohort-b", "march")}


async def test_a_runner_that_lost_the_action_stops_and_the_new_one_finishes_it() -> None:
    stores = Stores(250)
    service = stores.service()
    action = await service.start(ACCOUNT, ADD, enqueue=False)
    taken_over = False

    def take_over(seen: LeadAction) -> None:
        nonlocal taken_over
        if seen.done == 100 and not taken_over:  # another server's worker takes it now
            taken_over = True
            stores.actions._actions[seen.action_id] = replace(
                stores.actions._actions[seen.action_id],
                runner="other",
            )

    assert await service.run(action.action_id, take_over) is None
    assert (await service.get(ACCOUNT, action.action_id)).done == 100  # nothing more written

    resumed = await stores.service().run(action.action_id)

    assert resumed is not None
    assert (resumed.done, resumed.changed, resumed.skipped) == (250, 250, 0)
    assert await stores.tags() == {("cohort-b", "march")}


async def test_a_bug_fails_the_action_and_one_whose_runs_keep_dying_gives_up() -> None:
    stores = Stores(10)
    service = stores.service()
    action = await service.start(ACCOUNT, ADD, enqueue=False)

    def broken(_: LeadAction) -> None:
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError):
        await service.run(action.action_id, broken)
    failed = await service.get(ACCOUNT, action.action_id)
    assert (failed.status, failed.error) == (
        ActionStatus.FAILED, "stopped by an internal error (RuntimeError)",
    )  # fmt: skip

    dying = await service.start(ACCOUNT, ADD, enqueue=False)
    for n in range(MAX_ATTEMPTS + 1):  # each run's server died before its first batch
        await stores.actions.claim(dying.action_id, f"dead-{n}", T0)
    given_up = await service.run(dying.action_id)
    assert given_up is not None
    assert (given_up.status, given_up.error, given_up.done) == (ActionStatus.FAILED, GAVE_UP, 0)
    assert await stores.tags() == {("march",)}
