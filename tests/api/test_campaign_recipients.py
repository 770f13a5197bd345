"""A campaign's recipients over the API, and its counts while it is sent: the sending is
played here through the recipient repository as the sender will (lease, write messages,
record), since the sender is not part of this API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from leadmail.domain.campaign_recipients import LeasedBatch, RecipientOutcome
from leadmail.domain.campaigns import RecipientStatus
from leadmail.domain.email import Message, MessageStatus
from tests.api.campaign_support import RECIPIENT_FIELDS, campaign_of, create, march_leads
from tests.api.support import Api
from tests.support.envelope import CAMPAIGNS, MESSAGES, assert_error, assert_invalid, ok_data


async def lease(api: Api, campaign_id: str, limit: int) -> LeasedBatch:
    now = datetime.now(UTC)
    batch = await api.adapters.recipients.lease(
        campaign_id, limit, now=now, lease_until=now + timedelta(minutes=1)
    )
    assert batch is not None
    return batch


async def record(api: Api, batch: LeasedBatch, *statuses: RecipientStatus) -> None:
    """The batch's messages written (as the sender writes them), then its outcomes."""
    now = datetime.now(UTC)
    messages = [
        Message(r.message_id or "", api.account_id, "school@example.com", (r.email,),
                "Welcome", "welcome", MessageStatus.SENT, "console", None, 1, "", now, now)
        for r in batch.recipients
    ]  # fmt: skip
    await api.adapters.messages.add(messages)
    outcomes = [
        RecipientOutcome(r.lead_id, status, "" if status is RecipientStatus.SENT else "no")
        for r, status in zip(batch.recipients, statuses, strict=False)
    ]
    assert await api.adapters.recipients.record(batch, outcomes, now) == len(outcomes)


async def page(api: Api, campaign_id: str, **params: Any) -> Any:
    response = await api.client.get(
        f"{CAMPAIGNS}/{campaign_id}/recipients", params=params, headers=api.auth
    )
    return ok_data(response)


async def test_recipients_come_in_lead_order_a_page_at_a_time_by_status(api: Api) -> None:
    leads = await march_leads(api, 5, fields={"contact_email": "x@example.com"})
    await api.add_lead(email="no-city@example.com", tags=["march"])
    shared = {"school_name": "N", "courses_link": "l"}
    campaign = await create(api, variables=shared)  # contact_email: from the leads' fields
    assert campaign["counts"]["total"] == 6
    by_id = sorted(lead["lead_id"] for lead in leads)

    first = await page(api, campaign["id"], limit=2)
    rest = await page(api, campaign["id"], limit=10, cursor=first["next_cursor"])
    skipped = await page(api, campaign["id"], status="skipped")
    pending = await page(api, campaign["id"], status="pending")

    everyone = [*first["items"], *rest["items"]]
    assert [r["lead_id"] for r in everyone] == sorted(r["lead_id"] for r in everyone)
    assert len(everyone) == 6
    assert rest["next_cursor"] is None
    assert all(set(r) == RECIPIENT_FIELDS for r in everyone)
    [lacking] = skipped["items"]
    assert (lacking["email"], lacking["message_id"]) == ("no-city@example.com", None)
    assert "contact_email" in lacking["error"]
    assert [r["lead_id"] for r in pending["items"]] == by_id
    assert {(r["status"], r["message_id"], r["error"]) for r in pending["items"]} == {
        ("pending", None, "")
    }


async def test_counts_add_up_while_sent_and_sending_shows_as_pending(api: Api) -> None:
    await march_leads(api, 6, fields={"contact_email": "x@example.com"})
    campaign = await create(api)
    at = f"{CAMPAIGNS}/{campaign['id']}"

    first = await lease(api, campaign["id"], 3)
    during = campaign_of(await api.client.get(at, headers=api.auth))
    sending = await page(api, campaign["id"], status="pending")
    await record(api, first, RecipientStatus.SENT, RecipientStatus.SENT, RecipientStatus.FAILED)
    after = campaign_of(await api.client.get(at, headers=api.auth))

    assert during["counts"] == {**during["counts"], "total": 6, "pending": 6}
    assert len(sending["items"]) == 6
    assert {r["message_id"] for r in sending["items"]} == {None}  # no outcome yet
    assert after["counts"] == {"total": 6, "pending": 3, "sent": 2, "failed": 1, "skipped": 0,
                               "suppressed": 0, "unknown": 0, "cancelled": 0}  # fmt: skip
    assert after["rate_per_minute"] > 0  # 2 sent since it started, moments ago
    assert after["eta_seconds"] is not None
    sent = await page(api, campaign["id"], status="sent")
    message_id = sent["items"][0]["message_id"]
    assert message_id.startswith("msg_")
    opened = ok_data(await api.client.get(f"{MESSAGES}/{message_id}", headers=api.auth))
    assert opened["id"] == message_id

    second = await lease(api, campaign["id"], 1)
    cancelled = campaign_of(await api.client.post(f"{at}/cancel", headers=api.auth))
    assert cancelled["counts"] == {**cancelled["counts"], "total": 6, "pending": 1,
                                   "cancelled": 2, "sent": 2, "failed": 1}  # fmt: skip
    await record(api, second, RecipientStatus.SENT)  # the batch being sent lands
    done = campaign_of(await api.client.get(at, headers=api.auth))
    assert (done["counts"]["pending"], done["counts"]["sent"]) == (0, 3)


async def test_a_draft_has_no_recipients_yet(api: Api) -> None:
    await march_leads(api, 2)
    draft = await create(api, draft=True)

    assert await page(api, draft["id"]) == {"items": [], "next_cursor": None}


async def test_bad_parameters_are_refused_by_name(api: Api) -> None:
    await march_leads(api, 1)
    campaign = await create(api)
    url = f"{CAMPAIGNS}/{campaign['id']}/recipients"

    cases: list[tuple[list[tuple[str, str | int | float | bool | None]], str]] = [
        ([("status", "sending")], "status"),  # shown as pending: not a status to ask for
        ([("status", "null")], "status"),
        ([("status", "sent"), ("status", "failed")], "status"),
        ([("cursor", "not a lead id!")], "cursor"),
        ([("limit", "0")], "limit"),
        ([("limit", "101")], "limit"),
    ]
    for params, field in cases:
        response = await api.client.get(url, params=params, headers=api.auth)
        assert_invalid(response, field)
    missing = await api.client.get(f"{CAMPAIGNS}/cmp_missing/recipients", headers=api.auth)
    assert_error(missing, 404, "CAMPAIGN_NOT_FOUND")
