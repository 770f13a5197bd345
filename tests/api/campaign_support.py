"""What the campaign API tests share: a valid body, the fields of a campaign and a recipient
on the wire, and the checks every campaign answer must pass."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.support import SENDER, Api
from tests.support.envelope import CAMPAIGNS, ISO_UTC

CAMPAIGN_FIELDS = {
    "id",
    "name",
    "status",
    "template_id",
    "audience",
    "variables",
    "from",
    "reply_to",
    "send_at",
    "counts",
    "rate_per_minute",
    "eta_seconds",
    "failure_reason",
    "created_at",
    "updated_at",
    "started_at",
    "finished_at",
    "template_version",
    "layout_id",
    "layout_version",
    "paused_reason",
}
COUNT_NAMES = ("pending", "sent", "failed", "skipped", "suppressed", "unknown", "cancelled")
RECIPIENT_FIELDS = {"lead_id", "email", "status", "message_id", "error"}
# The "welcome" template needs these besides first_name, which every lead has.
SHARED = {
    "school_name": "Northwind Academy",
    "courses_link": "https://example.com/courses",
    "contact_email": "hello@example.com",
}


def campaign_body(**changes: Any) -> dict[str, Any]:
    """A valid body for POST /api/v1/campaigns (None drops a field)."""
    body: dict[str, Any] = {
        "name": "March open day",
        "template_id": "welcome",
        "audience": {"tag": "march"},
        "variables": SHARED,
        "from": SENDER,
        **changes,
    }
    return {name: value for name, value in body.items() if value is not None}


def assert_campaign(data: dict[str, Any]) -> dict[str, Any]:
    """A campaign on the wire: every field, counts that add up, times in UTC."""
    assert set(data) == CAMPAIGN_FIELDS, data
    counts = data["counts"]
    assert set(counts) == {"total", *COUNT_NAMES}
    assert counts["total"] == sum(counts[name] for name in COUNT_NAMES), counts
    assert all(isinstance(counts[name], int) and counts[name] >= 0 for name in COUNT_NAMES)
    for moment in ("created_at", "updated_at"):
        assert ISO_UTC.match(data[moment]), data[moment]
    for moment in ("started_at", "finished_at", "send_at"):
        assert data[moment] is None or ISO_UTC.match(data[moment]), data[moment]
    return data


async def create(api: Api, headers: dict[str, str] | None = None, **changes: Any) -> Any:
    """POST a campaign that must be created (201); its ``data``, checked."""
    response = await api.client.post(
        CAMPAIGNS, json=campaign_body(**changes), headers=headers or api.auth
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["success"], body["error"], body["message"]) == (True, "", "Campaign created")
    return assert_campaign(body["data"])


def campaign_of(response: httpx.Response) -> dict[str, Any]:
    """The campaign of a 200 envelope, checked."""
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["success"], body["error"]) == (True, "")
    return assert_campaign(body["data"])


async def march_leads(api: Api, count: int, **fields: Any) -> list[Any]:
    """``count`` leads tagged "march"."""
    return [
        await api.add_lead(email=f"m{i}@example.com", tags=["march"], **fields)
        for i in range(count)
    ]
