"""Campaign rules (domain/campaigns.py): every transition of the issue's table, allowed and
refused (409 CAMPAIGN_STATE naming the status), what counts show, the rate and the ETA."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from leadmail.domain.campaign_recipients import RecipientOutcome
from leadmail.domain.campaigns import (
    Campaign,
    CampaignCounts,
    CampaignStateConflict,
    CampaignStatus,
    RecipientStatus,
    eta_seconds,
    rate_per_minute,
)
from leadmail.domain.segments import LeadFilter

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
LATER = NOW + timedelta(hours=1)
S = CampaignStatus

# The table, written out here (not read from the code under test): the statuses
# each action applies to, and what it leads to (the ones by themselves too).
TABLE: dict[str, dict[CampaignStatus, CampaignStatus]] = {
    "start": {S.DRAFT: S.RUNNING},
    "pause": {S.SCHEDULED: S.PAUSED, S.RUNNING: S.PAUSED},
    "resume": {S.PAUSED: S.RUNNING},
    "cancel": dict.fromkeys((S.DRAFT, S.SCHEDULED, S.RUNNING, S.PAUSED), S.CANCELLED),
    "begin": {S.SCHEDULED: S.RUNNING},  # scheduled -> running at send_at
    "finish": {S.RUNNING: S.DONE},  # no recipient pending
    "fail": {S.RUNNING: S.FAILED},  # it cannot go on
}
CASES = [(action, status) for action in TABLE for status in CampaignStatus]


def campaign(status: CampaignStatus, send_at: datetime | None = None) -> Campaign:
    return Campaign(
        campaign_id="cmp_1",
        account_id="acc_1",
        name="March open day",
        template_id="welcome",
        audience=LeadFilter(),
        sender="team@example.com",
        status=status,
        created_at=NOW - timedelta(days=1),
        updated_at=NOW - timedelta(days=1),
        send_at=send_at,
    )


def act(value: Campaign, action: str, now: datetime = NOW) -> Campaign:
    if action == "fail":
        return value.fail(now, "the template 'welcome' was removed")
    changed: Campaign = getattr(value, action)(now)
    return changed


@pytest.mark.parametrize(("action", "status"), CASES, ids=[f"{a}-{s}" for a, s in CASES])
def test_every_action_from_every_status(action: str, status: CampaignStatus) -> None:
    before = campaign(status)
    allowed = TABLE[action]

    if status in allowed:
        after = act(before, action)
        assert after.status is allowed[status]
        assert after.updated_at == NOW
        assert after.finished_at == (NOW if after.status.finished else None)
    else:
        with pytest.raises(CampaignStateConflict) as refused:
            act(before, action)
        assert refused.value.code == "CAMPAIGN_STATE"
        assert f"is {status}" in refused.value.message  # names the current status
        assert refused.value.status is status


@pytest.mark.parametrize("action", ["start", "resume", "begin"])
def test_with_send_at_ahead_it_waits_scheduled(action: str) -> None:
    before = {"start": S.DRAFT, "resume": S.PAUSED, "begin": S.SCHEDULED}[action]

    waiting = act(campaign(before, send_at=LATER), action)
    due = act(campaign(before, send_at=LATER), action, now=LATER)
    past = act(campaign(before, send_at=NOW - timedelta(minutes=1)), action)

    assert (waiting.status, waiting.started_at) == (S.SCHEDULED, None)
    assert (due.status, due.started_at) == (S.RUNNING, LATER)
    assert past.status is S.RUNNING  # a time in the past starts at once


def test_started_at_is_the_first_start_and_failure_keeps_its_reason() -> None:
    running = campaign(S.DRAFT).start(NOW)
    resumed = running.pause(NOW + timedelta(minutes=1)).resume(LATER)

    assert (running.started_at, resumed.started_at) == (NOW, NOW)
    failed = resumed.fail(LATER, "the template 'welcome' was removed")
    assert (failed.failure_reason, failed.finished_at) == (
        "the template 'welcome' was removed",
        LATER,
    )
    with pytest.raises(CampaignStateConflict, match="is failed: it cannot resume"):
        failed.resume(LATER)


def test_counts_show_sending_as_pending_and_add_up() -> None:
    counts = CampaignCounts.of(
        {
            RecipientStatus.PENDING: 3,
            RecipientStatus.SENDING: 2,
            RecipientStatus.SENT: 10,
            RecipientStatus.FAILED: 1,
            RecipientStatus.SKIPPED: 4,
            RecipientStatus.UNKNOWN: 5,
            RecipientStatus.CANCELLED: 6,
        }
    )

    assert counts == CampaignCounts(
        pending=5, sent=10, failed=1, skipped=4, suppressed=0, unknown=5, cancelled=6
    )
    assert counts.total == 31
    assert CampaignCounts().total == 0


def test_a_recipients_status_as_shown() -> None:
    assert RecipientStatus.SENDING.shown is RecipientStatus.PENDING
    assert all(s.shown is s for s in RecipientStatus if s is not RecipientStatus.SENDING)
    assert {s for s in RecipientStatus if not s.final} == {
        RecipientStatus.PENDING,
        RecipientStatus.SENDING,
    }


@pytest.mark.parametrize("status", [RecipientStatus.PENDING, RecipientStatus.SENDING,
                                    RecipientStatus.CANCELLED])  # fmt: skip
def test_an_outcome_is_a_sends_final_status(status: RecipientStatus) -> None:
    with pytest.raises(ValueError, match="not an outcome"):
        RecipientOutcome("ld_1", status)


def test_a_skipped_or_suppressed_recipient_keeps_no_message() -> None:
    outcomes = [s for s in RecipientStatus if s.final and s is not RecipientStatus.CANCELLED]
    keeps = {s: RecipientOutcome("ld_1", s).keeps_message for s in outcomes}

    assert keeps == {
        RecipientStatus.SENT: True,
        RecipientStatus.FAILED: True,
        RecipientStatus.UNKNOWN: True,
        RecipientStatus.SKIPPED: False,
        RecipientStatus.SUPPRESSED: False,
    }


def test_the_rate_is_per_minute_over_the_window_and_the_eta_follows() -> None:
    assert rate_per_minute(120, timedelta(minutes=1)) == 120
    assert rate_per_minute(20, timedelta(seconds=10)) == 120  # a campaign 10 s old
    assert rate_per_minute(5, timedelta(0)) == 0
    assert eta_seconds(S.RUNNING, 300, 120) == 150
    assert eta_seconds(S.RUNNING, 1, 120) == 1  # rounded up
    assert eta_seconds(S.RUNNING, 300, 0) is None  # no pace yet
    assert eta_seconds(S.PAUSED, 300, 120) is None


@pytest.mark.parametrize(
    ("status", "action", "allowed"),
    [
        (S.DONE, "start", "only a campaign that is draft can"),
        (S.DONE, "pause", "only a campaign that is scheduled or running can"),
        (S.DONE, "resume", "only a campaign that is paused can"),
        (S.DONE, "cancel", "only a campaign that is draft, scheduled, running or paused can"),
    ],
)
def test_a_refused_action_names_the_statuses_it_applies_to_as_a_sentence_would(
    status: S, action: str, allowed: str
) -> None:
    with pytest.raises(CampaignStateConflict) as refused:
        getattr(campaign(status), action)(NOW)

    assert str(refused.value) == f"Campaign 'cmp_1' is done: it cannot {action} ({allowed})"


@pytest.mark.parametrize("status", list(CampaignStatus))
def test_an_edit_applies_to_a_draft_or_scheduled_campaign_and_makes_a_draft(
    status: CampaignStatus,
) -> None:
    before = replace(
        campaign(status, send_at=LATER), template_version=3, layout_id="base", layout_version=2
    )
    body = replace(
        campaign(S.RUNNING),
        campaign_id="cmp_new",
        name="April open day",
        audience=LeadFilter.from_json({"tag": "april"}),
        created_at=NOW,
    )

    if status in (S.DRAFT, S.SCHEDULED):
        edited = before.edit(body, LATER)
        assert (edited.campaign_id, edited.created_at) == (before.campaign_id, before.created_at)
        assert (edited.name, edited.audience) == (body.name, body.audience)
        assert (edited.status, edited.updated_at, edited.started_at) == (S.DRAFT, LATER, None)
        assert (edited.template_version, edited.layout_id, edited.layout_version) == (None,) * 3
    else:
        with pytest.raises(CampaignStateConflict) as refused:
            before.edit(body, LATER)
        assert str(refused.value) == (
            f"Campaign 'cmp_1' is {status}: it cannot be changed"
            " (only a campaign that is draft or scheduled can)"
        )
    deletable = status is S.DRAFT
    if deletable:
        before.check("delete")
    else:
        with pytest.raises(CampaignStateConflict, match=f"is {status}: it cannot be deleted"):
            before.check("delete")
