"""Campaigns on the wire: the request that creates one, a campaign with its counts, its
recipients, and their pages."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from leadmail.adapters.http.schemas import CampaignId, LeadId, MessageId, TemplateId
from leadmail.adapters.http.timestamps import to_iso, to_iso_or_none
from leadmail.domain.campaign_recipients import Recipient
from leadmail.domain.campaigns import CampaignCounts
from leadmail.domain.errors import ValidationFailed
from leadmail.services.campaign_checks import CampaignEdit, CampaignRequest
from leadmail.services.campaigns import CampaignView, Page

CampaignStatusOut = Literal[
    "draft", "scheduled", "running", "paused", "done", "failed", "cancelled"
]
# As a client sees a recipient (one being sent is pending).
RecipientStatusOut = Literal[
    "pending", "sent", "failed", "skipped", "suppressed", "unknown", "cancelled"
]
# A segment's filter value as stored and shown (LeadFilter.to_json).
AudienceValueOut = str | list[str] | int | float | bool


class CampaignIn(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    template_id: str
    # The segment as a JSON object (rules: campaign_rules.py; checked by LeadFilter).
    audience: dict[str, Any] = msgspec.field(default_factory=dict)
    variables: dict[str, str] = msgspec.field(default_factory=dict)
    sender: str | None = msgspec.field(default=None, name="from")
    reply_to: str | None = None
    send_at: str | None = None
    # A boolean (campaign_rules.py), checked here: Litestar converts leniently (0, "true").
    draft: Any = False

    def request(self) -> CampaignRequest:
        if not isinstance(self.draft, bool):
            raise ValidationFailed.one("draft", "must be true or false")
        return CampaignRequest(
            name=self.name,
            template_id=self.template_id,
            audience=self.audience,
            variables=self.variables,
            sender=self.sender,
            reply_to=self.reply_to,
            send_at=self.send_at,
            draft=self.draft,
        )


class CampaignChangeIn(msgspec.Struct, forbid_unknown_fields=True):
    """Any subset of NewCampaign's fields but ``draft``; omitted ones stay as stored. Null
    clears ``reply_to`` and ``send_at``, and gives ``from`` the default sender."""

    name: str | msgspec.UnsetType = msgspec.UNSET
    template_id: str | msgspec.UnsetType = msgspec.UNSET
    audience: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    variables: dict[str, str] | msgspec.UnsetType = msgspec.UNSET
    sender: str | msgspec.UnsetType | None = msgspec.field(default=msgspec.UNSET, name="from")
    reply_to: str | msgspec.UnsetType | None = msgspec.UNSET
    send_at: str | msgspec.UnsetType | None = msgspec.UNSET

    def edit(self) -> CampaignEdit:
        given = {
            name: value
            for name in self.__struct_fields__
            if (value := getattr(self, name)) is not msgspec.UNSET
        }
        if not given:
            listed = ", ".join(
                "from" if name == "sender" else name for name in self.__struct_fields__
            )
            raise ValidationFailed.one("body", f"must set at least one of {listed}")
        return CampaignEdit(given)


class CountsOut(msgspec.Struct):
    total: int
    pending: int
    sent: int
    failed: int
    skipped: int
    suppressed: int
    unknown: int
    cancelled: int

    @classmethod
    def of(cls, counts: CampaignCounts) -> CountsOut:
        return cls(
            total=counts.total,
            pending=counts.pending,
            sent=counts.sent,
            failed=counts.failed,
            skipped=counts.skipped,
            suppressed=counts.suppressed,
            unknown=counts.unknown,
            cancelled=counts.cancelled,
        )


class CampaignOut(msgspec.Struct):
    id: CampaignId
    name: str
    status: CampaignStatusOut
    template_id: TemplateId
    audience: dict[str, AudienceValueOut]
    variables: dict[str, str]
    sender: str = msgspec.field(name="from")
    reply_to: str | None
    send_at: str | None
    counts: CountsOut
    rate_per_minute: int  # recipients sent in the last minute (or since the start)
    eta_seconds: int | None  # at that pace, while running
    failure_reason: str
    created_at: str
    updated_at: str
    started_at: str | None
    finished_at: str | None
    # Frozen when it starts (null before): what its messages are made from.
    template_version: int | None
    layout_id: TemplateId | None
    layout_version: int | None
    # Why it is paused (null unless it is): a client's pause, or its account's daily quota
    # (it resumes by itself when the next UTC day begins).
    paused_reason: Literal["manual", "quota"] | None

    @classmethod
    def of(cls, view: CampaignView) -> CampaignOut:
        campaign = view.campaign
        return cls(
            id=campaign.campaign_id,
            name=campaign.name,
            status=campaign.status.value,
            template_id=campaign.template_id,
            audience=campaign.audience.to_json(),  # type: ignore[arg-type]
            variables=dict(campaign.variables),
            sender=campaign.sender,
            reply_to=campaign.reply_to,
            send_at=to_iso_or_none(campaign.send_at),
            counts=CountsOut.of(view.counts),
            rate_per_minute=view.rate_per_minute,
            eta_seconds=view.eta_seconds,
            failure_reason=campaign.failure_reason,
            created_at=to_iso(campaign.created_at),
            updated_at=to_iso(campaign.updated_at),
            started_at=to_iso_or_none(campaign.started_at),
            finished_at=to_iso_or_none(campaign.finished_at),
            template_version=campaign.template_version,
            layout_id=campaign.layout_id,
            layout_version=campaign.layout_version,
            paused_reason=campaign.paused_reason or None,  # type: ignore[arg-type]
        )


class CampaignPageOut(msgspec.Struct):
    items: list[CampaignOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: Page[CampaignView]) -> CampaignPageOut:
        return cls([CampaignOut.of(view) for view in page.items], page.next_cursor)


class RecipientOut(msgspec.Struct):
    lead_id: LeadId
    email: str
    status: RecipientStatusOut
    message_id: MessageId | None  # opens at GET /api/v1/email/messages/{id}
    error: str

    @classmethod
    def of(cls, recipient: Recipient) -> RecipientOut:
        return cls(
            lead_id=recipient.lead_id,
            email=recipient.email,
            status=recipient.status.shown.value,  # type: ignore[arg-type]
            # Once its outcome is known: before, its message may not be written yet.
            message_id=recipient.message_id if recipient.status.final else None,
            error=recipient.error,
        )


class RecipientPageOut(msgspec.Struct):
    items: list[RecipientOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: Page[Recipient]) -> RecipientPageOut:
        return cls([RecipientOut.of(r) for r in page.items], page.next_cursor)
