"""The suppression list on the wire (adapters/http/suppressions.py)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from leadmail.adapters.http.schemas import CampaignId, MessageId
from leadmail.adapters.http.timestamps import to_iso
from leadmail.domain.addresses import MAX_EMAIL_LENGTH
from leadmail.domain.suppressions import Suppression, SuppressionReason
from leadmail.services.suppressions import SuppressionPage

REASON_TEXT = (
    "`unsubscribed` (a one-click unsubscribe link), `bounced` (a hard bounce the provider"
    " reported), `complained` (marked as spam), `manual` (added by the account)"
)
EMAIL_TEXT = (
    "The address, stored case-folded without a display name; once erased, its digest"
    " (`sha256:...`), which still suppresses it"
)


class SuppressionIn(msgspec.Struct, forbid_unknown_fields=True):
    email: Annotated[
        str,
        msgspec.Meta(
            min_length=1,
            max_length=MAX_EMAIL_LENGTH,
            description="The address (a display name, `Ada <ada@example.com>`, is dropped)",
        ),
    ]
    reason: Annotated[
        Literal["manual"],
        msgspec.Meta(description="Only `manual`: the service adds the other reasons itself"),
    ] = "manual"


class SuppressionOut(msgspec.Struct):
    email: Annotated[str, msgspec.Meta(description=EMAIL_TEXT)]
    reason: Annotated[SuppressionReason, msgspec.Meta(description=REASON_TEXT)]
    created_at: str
    message_id: MessageId | None  # the message whose bounce, complaint or link added it
    campaign_id: CampaignId | None  # the campaign whose link added it

    @classmethod
    def of(cls, entry: Suppression) -> SuppressionOut:
        return cls(
            email=entry.email,
            reason=entry.reason,
            created_at=to_iso(entry.created_at),
            message_id=entry.message_id,
            campaign_id=entry.campaign_id,
        )


class SuppressionPageOut(msgspec.Struct):
    items: list[SuppressionOut]
    next_cursor: str | None

    @classmethod
    def of(cls, page: SuppressionPage) -> SuppressionPageOut:
        return cls([SuppressionOut.of(e) for e in page.items], page.next_cursor)


class RemovedOut(msgspec.Struct):
    email: str  # as the request named it
