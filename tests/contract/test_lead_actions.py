"""The LeadActionRepository contract (ports/lead_actions.py), on memory, SQLite and
Postgres: an action stored and found in its own account only; claimed by one runner at a
time; its leads frozen once (the segment then, among the leads created by the action),
oldest first, in batches (of ACTION_BATCH_IN_TESTS here); each batch applied whole and
once with its counts (tags added or removed from the leads as they are when written, with
a timeline event each; leads deleted, their events with them), batches at once on
Postgres, a batch refused whole for a runner that lost it; and finished, its frozen leads
forgotten."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from leadmail.adapters.db.lead_actions import ACTIONS
from leadmail.domain.lead_actions import (
    ActionBatch,
    ActionKind,
    ActionOutcome,
    ActionStatus,
    LeadAction,
    new_action_id,
)
from leadmail.domain.lead_listing import LeadQuery
from leadmail.domain.lead_timeline import LeadEventKind
from leadmail.domain.segments import LeadFilter
from leadmail.domain.tags import MAX_TAGS
from tests.contract.support import Storage, a_lead, moment

RUNNER = "runner-1"
MEMBERS = ACTIONS.statement(
    'SELECT count(*) AS "n" FROM "lead_action_members" WHERE "action_id" = %s'
)


def an_action(
    account: str,
    kind: ActionKind = ActionKind.ADD_TAGS,
    tags: tuple[str, ...] = ("cohort-b",),
    segment: LeadFilter | None = None,
    created_at_ms: int = 10_000,
) -> LeadAction:
    at = moment(created_at_ms)
    segment = segment if segment is not None else LeadFilter(all_tags=("march",))
    return LeadAction(new_action_id(), account, kind, tags, segment, ActionStatus.QUEUED, at, at)


async def seeded(storage: Storage, account: str, count: int, **lead: object) -> list[str]:
    """``count`` leads tagged march, one ms apart from T0: their ids oldest first."""
    ids = []
    for n in range(count):
        kw = {"tags": ("march",), **lead}
        added = await storage.leads.add(
            a_lead(account, created_at=moment(n), **kw)  # type: ignore[arg-type]
        )
        ids.append(added.lead_id)
    return ids


async def claimed(storage: Storage, action: LeadAction, runner: str = RUNNER) -> LeadAction:
    await storage.lead_actions.create(action)
    found = await storage.lead_actions.claim(action.action_id, runner, moment(20_000))
    assert found is not None
    frozen = await storage.lead_actions.freeze(action.action_id, runner, moment(20_001))
    assert frozen is not None
    assert frozen.total is not None
    return frozen


def batch_of(action: LeadAction, start: int, end: int, runner: str = RUNNER) -> ActionBatch:
    return ActionBatch(action, runner, start, end, moment(30_000))


async def apply_all(storage: Storage, action: LeadAction) -> ActionOutcome:
    """Every batch left, one after the other: their counts summed."""
    changed = skipped = failed = 0
    for start, end in await storage.lead_actions.remaining(action.action_id):
        outcome = await storage.lead_actions.apply(batch_of(action, start, end))
        assert outcome is not None
        assert outcome.applied
        changed, skipped, failed = (changed + outcome.changed, skipped + outcome.skipped,
                                    failed + outcome.failed)  # fmt: skip
    return ActionOutcome(changed, skipped, failed)


async def tags_of(storage: Storage, account: str, ids: list[str]) -> list[tuple[str, ...]]:
    found = await storage.leads.get_many(account, ids)
    return [found[i].tags for i in ids]


async def test_an_action_is_stored_whole_and_found_in_its_account_only(storage: Storage) -> None:
    account, stranger = await storage.new_account(), await storage.new_account()
    segment = LeadFilter(all_tags=("march",), search="ada", created_after=moment(-5))
    action = an_action(account, ActionKind.REMOVE_TAGS, ("a", "b"), segment)

    await storage.lead_actions.create(action)

    assert await storage.lead_actions.get(account, action.action_id) == action
    assert await storage.lead_actions.get(stranger, action.action_id) is None
    assert action in await storage.lead_actions.unfinished()


async def test_the_frozen_leads_are_the_segment_then_among_those_created_by_the_action(
    storage: Storage,
) -> None:
    account, stranger = await storage.new_account(), await storage.new_account()
    ids = await seeded(storage, account, 4)
    await storage.leads.add(a_lead(account, tags=("april",), created_at=moment(1)))
    await seeded(storage, stranger, 2)
    late = await storage.leads.add(a_lead(account, tags=("march",), created_at=moment(11_000)))
    action = an_action(account)

    frozen = await claimed(storage, action)

    assert (frozen.total, frozen.done, frozen.status) == (4, 0, ActionStatus.RUNNING)
    # A lead that joins the segment after the freeze is not in it; freezing again changes
    # nothing.
    await storage.leads.add(a_lead(account, tags=("march",), created_at=moment(2)))
    again = await storage.lead_actions.freeze(action.action_id, RUNNER, moment(20_002))
    assert again is not None
    assert again.total == 4
    assert await storage.lead_actions.remaining(action.action_id) == [(0, 2), (2, 4)]
    assert await apply_all(storage, frozen) == ActionOutcome(changed=4)
    assert await tags_of(storage, account, ids) == [("cohort-b", "march")] * 4
    assert (await tags_of(storage, account, [late.lead_id])) == [("march",)]


async def test_one_runner_at_a_time_and_a_batch_lands_once(storage: Storage) -> None:
    account = await storage.new_account()
    ids = await seeded(storage, account, 5)
    frozen = await claimed(storage, an_action(account))
    assert await storage.lead_actions.remaining(frozen.action_id) == [(0, 2), (2, 4), (4, 5)]

    first = await storage.lead_actions.apply(batch_of(frozen, 0, 2))
    assert first == ActionOutcome(changed=2)
    # The same batch again (a runner that did not see its answer): nothing written.
    again = await storage.lead_actions.apply(batch_of(frozen, 0, 2))
    assert again is not None
    assert not again.applied
    assert await storage.lead_actions.remaining(frozen.action_id) == [(2, 4), (4, 5)]
    # Another runner takes over: the first can write no more, and attempts count it.
    taken = await storage.lead_actions.claim(frozen.action_id, "runner-2", moment(21_000))
    assert taken is not None
    assert (taken.done, taken.attempts) == (2, 1)
    assert await storage.lead_actions.apply(batch_of(frozen, 2, 4)) is None
    assert await storage.lead_actions.freeze(frozen.action_id, RUNNER, moment(1)) is None
    for start, end in await storage.lead_actions.remaining(frozen.action_id):
        done = await storage.lead_actions.apply(batch_of(frozen, start, end, "runner-2"))
        assert done is not None
        assert done.applied

    stored = await storage.lead_actions.get(account, frozen.action_id)
    assert stored is not None
    assert (stored.done, stored.changed, stored.skipped, stored.attempts) == (5, 5, 0, 0)
    assert await storage.lead_actions.remaining(frozen.action_id) == []
    assert await tags_of(storage, account, ids) == [("cohort-b", "march")] * 5


async def test_batches_applied_at_once_each_land_once(storage: Storage) -> None:
    account = await storage.new_account()
    ids = await seeded(storage, account, 7)
    frozen = await claimed(storage, an_action(account))
    batches = await storage.lead_actions.remaining(frozen.action_id)

    # Every batch twice, all at once (two runs of one runner meeting on each).
    answers = await asyncio.gather(
        *(storage.lead_actions.apply(batch_of(frozen, s, e)) for s, e in batches * 2)
    )

    applied = [a for a in answers if a is not None and a.applied]
    assert len(applied) == len(batches) == 4
    assert sum(a.changed for a in applied) == 7
    stored = await storage.lead_actions.get(account, frozen.action_id)
    assert stored is not None
    assert (stored.done, stored.changed, stored.skipped) == (7, 7, 0)
    assert await tags_of(storage, account, ids) == [("cohort-b", "march")] * 7
    for lead_id in ids:  # one event each, not two
        assert len(await storage.lead_events.newest(account, lead_id, 10)) == 1


async def test_a_tag_change_counts_what_it_changed_skipped_and_could_not(
    storage: Storage,
) -> None:
    account = await storage.new_account()
    has_it = await storage.leads.add(
        a_lead(account, tags=("cohort-b", "march"), created_at=moment(0))
    )
    full = tuple(f"t{n:02d}" for n in range(MAX_TAGS - 1))
    at_limit = await storage.leads.add(a_lead(account, tags=(*full, "march"), created_at=moment(1)))
    plain = await storage.leads.add(a_lead(account, tags=("march",), created_at=moment(2)))
    gone = await storage.leads.add(a_lead(account, tags=("march",), created_at=moment(3)))
    frozen = await claimed(storage, an_action(account))
    assert await storage.leads.delete(account, gone.lead_id)

    first = await storage.lead_actions.apply(batch_of(frozen, 0, 2))
    second = await storage.lead_actions.apply(batch_of(frozen, 2, 4))

    assert (first, second) == (ActionOutcome(skipped=1, failed=1), ActionOutcome(1, 1, 0))
    after = await storage.leads.get_many(account, [has_it.lead_id, at_limit.lead_id,
                                                   plain.lead_id])  # fmt: skip
    assert after[has_it.lead_id] == has_it  # untouched: not even updated_at
    assert after[at_limit.lead_id] == at_limit
    assert after[plain.lead_id].tags == ("cohort-b", "march")
    assert after[plain.lead_id].updated_at == moment(30_000)
    events = await storage.lead_events.newest(account, plain.lead_id, 10)
    assert [(e.kind, e.at, dict(e.detail)) for e in events] == [
        (
            LeadEventKind.TAGS_CHANGED,
            moment(30_000),
            {"add": ["cohort-b"], "remove": [], "action_id": frozen.action_id},
        )
    ]
    assert await storage.lead_events.newest(account, has_it.lead_id, 10) == []
    stored = await storage.lead_actions.get(account, frozen.action_id)
    assert stored is not None
    assert (stored.done, stored.changed, stored.skipped, stored.failed) == (4, 1, 2, 1)


async def test_tags_are_removed_from_each_lead_as_it_is_when_written(storage: Storage) -> None:
    account = await storage.new_account()
    ids = await seeded(storage, account, 3)
    action = an_action(account, ActionKind.REMOVE_TAGS, ("march", "vip"))
    frozen = await claimed(storage, action)
    # Changed after the freeze, before the batch: the change made meanwhile is kept.
    changed = await storage.leads.get(account, ids[1])
    assert changed is not None
    await storage.leads.replace(replace(changed, tags=("march", "paid", "vip")))

    assert await apply_all(storage, frozen) == ActionOutcome(changed=3)
    assert await tags_of(storage, account, ids) == [(), ("paid",), ()]


async def test_a_delete_removes_the_leads_and_their_events_and_counts_the_gone(
    storage: Storage,
) -> None:
    account = await storage.new_account()
    ids = await seeded(storage, account, 4)
    kept = await storage.leads.add(a_lead(account, tags=("april",)))
    frozen = await claimed(storage, an_action(account, ActionKind.DELETE, ()))
    assert await storage.leads.delete(account, ids[0])

    first = await storage.lead_actions.apply(batch_of(frozen, 0, 2))
    second = await storage.lead_actions.apply(batch_of(frozen, 2, 4))

    assert (first, second) == (ActionOutcome(changed=1, skipped=1), ActionOutcome(changed=2))
    assert await storage.leads.get_many(account, ids) == {}
    assert await storage.leads.get(account, kept.lead_id) == kept
    listed = await storage.leads.list(account, LeadQuery(limit=10))
    assert [lead.lead_id for lead in listed] == [kept.lead_id]


async def test_finishing_forgets_the_frozen_leads_and_takes_it_off_the_unfinished(
    storage: Storage,
) -> None:
    account = await storage.new_account()
    await seeded(storage, account, 2)
    frozen = await claimed(storage, an_action(account))
    await apply_all(storage, frozen)

    # Not the runner: refused; the runner: done.
    assert await storage.lead_actions.finish(frozen.action_id, "other", moment(40_000)) is None
    done = await storage.lead_actions.finish(frozen.action_id, RUNNER, moment(40_000))

    assert done is not None
    assert (done.status, done.finished_at, done.error) == (ActionStatus.DONE, moment(40_000), "")
    assert frozen.action_id not in {a.action_id for a in await storage.lead_actions.unfinished()}
    assert await storage.lead_actions.claim(frozen.action_id, RUNNER, moment(41_000)) is None
    if storage.database is not None:  # SQL: the members' rows are gone
        row = await storage.database.fetchrow(MEMBERS, frozen.action_id)
        assert row is not None
        assert row["n"] == 0
    # Anyone may fail an unfinished one (a command line interrupted).
    other = await claimed(storage, an_action(account))
    failed = await storage.lead_actions.finish(other.action_id, "", moment(42_000), error="why")
    assert failed is not None
    assert (failed.status, failed.error) == (ActionStatus.FAILED, "why")
