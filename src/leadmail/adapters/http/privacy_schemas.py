"""A person's data on the wire: the export and the erasure (adapters/http/privacy.py)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from leadmail.adapters.http.campaign_schemas import RecipientOut
from leadmail.adapters.http.import_schemas import ImportErrorOut
from leadmail.adapters.http.schemas import CampaignId, ImportId, LeadOut, MessageOut
from leadmail.adapters.http.suppression_schemas import SuppressionOut
from leadmail.adapters.http.timestamps import to_iso
from leadmail.domain.addresses import MAX_EMAIL_LENGTH
from leadmail.domain.campaign_recipients import Recipient
from leadmail.domain.privacy import Erased, ImportRow, PersonalData

EMAIL_TEXT = "The person's address (a display name, `Ada <ada@example.com>`, is dropped)"


class EraseIn(msgspec.Struct, forbid_unknown_fields=True):
    email: Annotated[
        str, msgspec.Meta(min_length=1, max_length=MAX_EMAIL_LENGTH, description=EMAIL_TEXT)
    ]


class PrivacyRecipientOut(msgspec.Struct):
    """One campaign the person was a recipient of, and what became of it."""

    campaign_id: CampaignId
    recipient: RecipientOut
    updated_at: str

    @classmethod
    def of(cls, recipient: Recipient) -> PrivacyRecipientOut:
        return cls(recipient.campaign_id, RecipientOut.of(recipient), to_iso(recipient.updated_at))


class PrivacyImportRowOut(msgspec.Struct):
    """A row of an import that was not imported, whose email cell is the person's."""

    import_id: ImportId
    row: ImportErrorOut

    @classmethod
    def of(cls, found: ImportRow) -> PrivacyImportRowOut:
        return cls(found.import_id, ImportErrorOut.of(found.row))


class PersonalDataOut(msgspec.Struct):
    email: Annotated[str, msgspec.Meta(description="The address asked for, case-folded")]
    lead: LeadOut | None
    messages: Annotated[
        list[MessageOut],
        msgspec.Meta(description="Every message to the address, newest first, with its events"),
    ]
    campaign_recipients: list[PrivacyRecipientOut]
    import_errors: list[PrivacyImportRowOut]
    suppression: Annotated[
        SuppressionOut | None,
        msgspec.Meta(
            description=(
                "The entry under the address's digest: after an erasure it stays, its"
                " `email` the digest, so the person is never mailed again"
            )
        ),
    ]

    @classmethod
    def of(cls, data: PersonalData) -> PersonalDataOut:
        return cls(
            email=data.person.address,
            lead=None if data.lead is None else LeadOut.of(data.lead),
            messages=[MessageOut.of(m.message, m.events) for m in data.messages],
            campaign_recipients=[PrivacyRecipientOut.of(r) for r in data.recipients],
            import_errors=[PrivacyImportRowOut.of(r) for r in data.import_rows],
            suppression=None if data.suppression is None else SuppressionOut.of(data.suppression),
        )


class ErasedOut(msgspec.Struct):
    """What the erasure changed, by kind (0s when it had been erased already)."""

    digest: Annotated[
        str, msgspec.Meta(description="What the erased records hold instead of the address")
    ]
    leads: int
    messages: int
    events: int
    campaign_recipients: int
    import_errors: int
    suppressions: int

    @classmethod
    def of(cls, erased: Erased) -> ErasedOut:
        return cls(
            digest=erased.person.digest,
            leads=erased.leads,
            messages=erased.messages,
            events=erased.events,
            campaign_recipients=erased.campaign_recipients,
            import_errors=erased.import_errors,
            suppressions=erased.suppressions,
        )
