"""Campaigns in SQL (their recipients: campaign_recipients.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import msgspec

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.statements import Mapped, Statement
from leadmail.adapters.db.tables import Campaigns
from leadmail.domain.campaigns import Campaign, CampaignStatus
from leadmail.domain.custom_fields import encode_fields
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.segments import LeadFilter
from leadmail.ports.campaigns import CampaignRepository

# The audience is stored as the JSON LeadFilter.to_json writes (and read back by
# LeadFilter.from_json: _campaign_of).
CAMPAIGNS = Mapped(
    Campaigns, Campaign, computed={"audience": lambda c: encode_fields(c.audience.to_json())}
)
_ALL = ", ".join(f'"{column}"' for column in CAMPAIGNS.columns)
_INSERT = CAMPAIGNS.insert
_GET = CAMPAIGNS.select("account_id", "campaign_id")
_FIND = CAMPAIGNS.select("campaign_id")
# What a transition changes; the rest of a campaign is written once.
_CHANGED = [
    "status",
    "failure_reason",
    "updated_at",
    "started_at",
    "finished_at",
    "template_version",
    "layout_id",
    "layout_version",
    "paused_reason",
]


def _set_if_status(columns: list[str]) -> Statement:
    """Write ``columns`` (from the campaign) where its id is and its status still is the
    extra argument after them: a compare-and-set, returning the row."""
    return CAMPAIGNS.statement(
        'UPDATE "campaigns" SET '
        + ", ".join(f'"{column}" = %s' for column in columns)
        + ' WHERE "campaign_id" = %s AND "status" = %s'
        + f" RETURNING {_ALL}",
        [*columns, "campaign_id"],
    )


_SAVE = _set_if_status(_CHANGED)
# An edit: everything but the campaign's identity (id, account, creation).
_REWRITE = _set_if_status(
    [c for c in CAMPAIGNS.columns if c not in ("campaign_id", "account_id", "created_at")]
)
_REMOVE = CAMPAIGNS.statement(
    'DELETE FROM "campaigns" WHERE "campaign_id" = %s AND "status" = %s RETURNING "campaign_id"'
)
_NEWEST_FIRST = ' ORDER BY "created_at" DESC, "campaign_id" DESC LIMIT %s'
_LIST = CAMPAIGNS.statement(
    f'SELECT {_ALL} FROM "campaigns" WHERE "account_id" = %s{_NEWEST_FIRST}'
)
_LIST_AFTER = CAMPAIGNS.statement(
    f'SELECT {_ALL} FROM "campaigns" WHERE "account_id" = %s'
    ' AND ("created_at" < %s OR ("created_at" = %s AND "campaign_id" < %s))' + _NEWEST_FIRST
)
_NOT_FINISHED = ", ".join(f"'{status}'" for status in CampaignStatus if not status.finished)
_USING = CAMPAIGNS.statement(
    'SELECT "campaign_id" FROM "campaigns" WHERE "account_id" = %s'
    ' AND ("template_id" = %s OR "layout_id" = %s)'
    f' AND "status" IN ({_NOT_FINISHED}) ORDER BY "created_at", "campaign_id"'
)
_ACTIVE = CAMPAIGNS.statement(
    f'SELECT {_ALL} FROM "campaigns"'
    f" WHERE \"status\" IN ('{CampaignStatus.RUNNING}', '{CampaignStatus.SCHEDULED}')"
    ' ORDER BY "created_at", "campaign_id"'
)


def _campaign_of(row: Mapping[str, Any]) -> Campaign:
    stored = row["audience"]
    audience = msgspec.json.decode(stored) if isinstance(stored, str | bytes) else stored
    return replace(CAMPAIGNS.from_row(row), audience=LeadFilter.from_json(audience))


class PiccoloCampaignRepository(CampaignRepository):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def add(self, campaign: Campaign) -> None:
        await self._db.execute(_INSERT, *_INSERT.args(campaign))

    async def get(self, account_id: str, campaign_id: str) -> Campaign | None:
        return self._one(await self._db.fetchrow(_GET, account_id, campaign_id))

    async def find(self, campaign_id: str) -> Campaign | None:
        return self._one(await self._db.fetchrow(_FIND, campaign_id))

    async def save(self, campaign: Campaign, expected: CampaignStatus) -> Campaign | None:
        row = await self._db.fetchrow(_SAVE, *_SAVE.args(campaign), str(expected))
        return self._one(row)

    async def rewrite(self, campaign: Campaign, expected: CampaignStatus) -> Campaign | None:
        row = await self._db.fetchrow(_REWRITE, *_REWRITE.args(campaign), str(expected))
        return self._one(row)

    async def remove(self, campaign: Campaign, expected: CampaignStatus) -> bool:
        row = await self._db.fetchrow(_REMOVE, campaign.campaign_id, str(expected))
        return row is not None

    async def using(self, account_id: str, template_id: str) -> list[str]:
        rows = await self._db.fetch(_USING, account_id, template_id, template_id)
        return [row["campaign_id"] for row in rows]

    async def active(self) -> list[Campaign]:
        return [_campaign_of(row) for row in await self._db.fetch(_ACTIVE)]

    async def list(
        self, account_id: str, limit: int, after: PageCursor | None = None
    ) -> list[Campaign]:
        if after is None:
            rows = await self._db.fetch(_LIST, account_id, limit + 1)
        else:
            at, last = after.created_at, after.lead_id
            rows = await self._db.fetch(_LIST_AFTER, account_id, at, at, last, limit + 1)
        return [_campaign_of(row) for row in rows]

    @staticmethod
    def _one(row: Mapping[str, Any] | None) -> Campaign | None:
        return None if row is None else _campaign_of(row)
