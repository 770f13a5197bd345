"""An account's daily send quota on the real server: a campaign that reaches it is paused
(`paused_reason: "quota"`) and its resume refused with 429; a send past it is 429
QUOTA_EXCEEDED with Retry-After and data.reset_at; `leadmail accounts quota` changes it on
the running server within 10 s."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.e2e.campaigns import CAMPAIGNS, campaign_rig
from tests.support.envelope import SEND, assert_error, ok_data

OBEYED_WITHIN_S = 10.0 + 1.0  # the servers' cache of a quota, and a request's time


def plain(to: str) -> dict[str, str]:
    return {"to": to, "from": "school@example.com", "subject": "Hi", "html": "<p>Hi</p>"}


def test_the_quota_pauses_a_campaign_and_refuses_sends_until_it_is_lifted(
    tmp_path: Path,
) -> None:
    with campaign_rig(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, "resend", EMAIL_BATCH="2") as rig:
        rig.leads(5)
        set_quota = rig.cli("accounts", "quota", rig.account, "3")
        assert set_quota.returncode == 0, set_quota.describe()
        assert "3 messages a UTC day" in set_quota.stdout

        campaign_id = rig.create()
        paused = rig.wait_for(campaign_id, "paused")
        assert paused["paused_reason"] == "quota"
        # Batches of 2: the first fits, the second does not fit the 1 place left.
        assert (paused["counts"]["sent"], paused["counts"]["pending"]) == (2, 3)
        with rig.client() as api:
            refused_resume = api.post(f"{CAMPAIGNS}/{campaign_id}/resume")
            one_more = api.post(SEND, json=plain("ada@example.com"))
            refused = api.post(SEND, json=plain("grace@example.com"))
        assert_error(refused_resume, 429, "QUOTA_EXCEEDED")
        assert one_more.status_code == 200, one_more.text
        body = assert_error(refused, 429, "QUOTA_EXCEEDED")
        tomorrow = datetime.combine(
            datetime.now(UTC).date() + timedelta(days=1), datetime.min.time(), tzinfo=UTC
        )
        assert datetime.fromisoformat(body["data"]["reset_at"]) == tomorrow
        assert body["data"]["quota"] == 3
        assert 0 < int(refused.headers["retry-after"]) <= 86_400
        shown = rig.cli("accounts", "quota", rig.account)
        assert "3 used today, 0 left" in shown.stdout, shown.describe()

        lifted = rig.cli("accounts", "quota", rig.account, "0")
        assert lifted.returncode == 0, lifted.describe()
        started = time.monotonic()
        with rig.client() as api:
            while (answer := api.post(SEND, json=plain("grace@example.com"))).status_code == 429:
                assert time.monotonic() - started < OBEYED_WITHIN_S, "the quota still holds"
                time.sleep(0.5)
            assert answer.status_code == 200, answer.text
            resumed = ok_data(api.post(f"{CAMPAIGNS}/{campaign_id}/resume"))
        assert resumed["paused_reason"] is None
        done = rig.wait_for(campaign_id, "done")
        assert done["counts"]["sent"] == 5
