"""The OpenAPI document's campaign examples (examples.py takes them in): a campaign half
sent, as the controllers answer for each operation, its recipients, and its refusals."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import msgspec

from leadmail.adapters.http import envelopes, samples
from leadmail.adapters.http.campaign_schemas import (
    CampaignOut,
    CampaignPageOut,
    RecipientOut,
    RecipientPageOut,
)
from leadmail.adapters.http.privacy_schemas import ErasedOut, PersonalDataOut
from leadmail.domain.campaign_recipients import Recipient, lacks_variable
from leadmail.domain.campaigns import (
    AudienceEmpty,
    Campaign,
    CampaignCounts,
    CampaignNotFound,
    CampaignStateConflict,
    CampaignStatus,
    RecipientStatus,
)
from leadmail.domain.errors import LeadmailError
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.privacy import PersonalData, SentMessage
from leadmail.domain.segments import LeadFilter
from leadmail.services.campaigns import CampaignView, Page

AT = samples.AT
# What the request example (request_examples.py) asks for, and what it stores.
AUDIENCE: dict[str, Any] = {"tag": ["open-day"], "not_tag": ["enrolled"]}
VARIABLES = {
    "school_name": "Northwind Academy",
    "courses_link": "https://northwind.example.com/courses",
    "contact_email": "hello@northwind.example.com",
}
CAMPAIGN = Campaign(
    campaign_id="cmp_Hq7Rt2Kx9Lm4Vb8Nc3Pw6A",
    account_id=samples.ACCOUNT,
    name="March open day invitation",
    template_id="welcome",
    audience=LeadFilter.from_json(AUDIENCE),
    sender=samples.SENDER,
    status=CampaignStatus.RUNNING,
    created_at=AT,
    updated_at=AT,
    variables=VARIABLES,
    started_at=AT,
)
# Half way: 8,000 leads, 4,000 sent at 12,000 a minute.
COUNTS = CampaignCounts(pending=3_980, sent=4_000, failed=3, skipped=12, unknown=5)
RUNNING = CampaignView(CAMPAIGN, COUNTS, 12_000, 20)
_LATER = AT.replace(minute=31)


def _as(status: CampaignStatus, counts: CampaignCounts = COUNTS) -> CampaignView:
    changed = replace(CAMPAIGN, status=status, updated_at=_LATER)
    if status.finished:
        changed = replace(changed, finished_at=_LATER)
    return CampaignView(changed, counts, 0, None)


RECIPIENTS = [
    Recipient(CAMPAIGN.campaign_id, samples.LEAD.lead_id, samples.LEAD.email,
              RecipientStatus.SENT, AT, "msg_Vb7Qw2Lr9TzK4mXc8HnP1A", "bat_Tz4", None, ""),
    Recipient(CAMPAIGN.campaign_id, "ld_4mXc8HnP1AVb7Qw2Lr9TzK", "grace@example.com",
              RecipientStatus.SKIPPED, AT, None, "bat_Tz4", None, lacks_variable("city")),
]  # fmt: skip


def _campaign(message: str, view: CampaignView) -> envelopes.CampaignEnvelope:
    return envelopes.CampaignEnvelope.of(message, CampaignOut.of(view))


_CREATED = CampaignCounts(pending=8_000)
SUCCESSES: dict[str, msgspec.Struct] = {
    "createCampaign": _campaign("Campaign created", CampaignView(CAMPAIGN, _CREATED, 0, None)),
    "listCampaigns": envelopes.CampaignPageEnvelope.of(
        "Campaigns retrieved",
        CampaignPageOut.of(
            Page([RUNNING], PageCursor(CAMPAIGN.created_at, CAMPAIGN.campaign_id).encode())
        ),
    ),
    "getCampaign": _campaign("Campaign retrieved", RUNNING),
    "updateCampaign": _campaign(
        "Campaign updated",
        CampaignView(
            replace(
                CAMPAIGN,
                name="March open day: second call",
                status=CampaignStatus.DRAFT,
                started_at=None,
                send_at=AT.replace(day=9, hour=9, minute=0, second=0, microsecond=0),
                updated_at=_LATER,
            ),
            _CREATED,
            0,
            None,
        ),
    ),
    "deleteCampaign": envelopes.DeletedCampaignEnvelope.of(
        "Campaign deleted", envelopes.DeletedCampaignOut(id=CAMPAIGN.campaign_id)
    ),
    "startCampaign": _campaign("Campaign started", CampaignView(CAMPAIGN, _CREATED, 0, None)),
    "pauseCampaign": _campaign("Campaign paused", _as(CampaignStatus.PAUSED)),
    "resumeCampaign": _campaign("Campaign resumed", CampaignView(CAMPAIGN, COUNTS, 0, None)),
    "cancelCampaign": _campaign(
        "Campaign cancelled",
        _as(CampaignStatus.CANCELLED, replace(COUNTS, pending=0, cancelled=3_980)),
    ),
    "listCampaignRecipients": envelopes.RecipientPageEnvelope.of(
        "Recipients retrieved",
        RecipientPageOut([RecipientOut.of(r) for r in RECIPIENTS], RECIPIENTS[-1].lead_id),
    ),
}
RAISED: dict[str, LeadmailError] = {
    "CAMPAIGN_NOT_FOUND": CampaignNotFound(CAMPAIGN.campaign_id),
    "CAMPAIGN_STATE": CampaignStateConflict(CAMPAIGN.campaign_id, CampaignStatus.DONE, "pause"),
    "AUDIENCE_EMPTY": AudienceEmpty(),
}

# The export of Ada's data: her recipient of CAMPAIGN among the rest (privacy endpoints).
PERSONAL_DATA = envelopes.PersonalDataEnvelope.of(
    "Personal data exported",
    PersonalDataOut.of(
        PersonalData(
            samples.ADA,
            samples.LEAD,
            (SentMessage(samples.DELIVERED, tuple(samples.DELIVERED_EVENTS)),),
            (RECIPIENTS[0],),
            (samples.ADA_IMPORT_ROW,),
            samples.ADA_SUPPRESSION,
        )
    ),
)
SUCCESSES |= {
    "exportPersonalData": PERSONAL_DATA,
    "erasePersonalData": envelopes.ErasedEnvelope.of(
        "Personal data erased", ErasedOut.of(samples.ADA_ERASED)
    ),
}
