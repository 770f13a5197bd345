"""What the contract suites share: the storage under test and builders for its inputs.

Every test makes its own accounts with random names, so the suites also run against a
database other tests write to (the session's Postgres database).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from leadmail.adapters.db.database import Database
from leadmail.domain.campaigns import Campaign, CampaignStatus, new_campaign_id
from leadmail.domain.custom_fields import FieldValue
from leadmail.domain.email import Message, MessageStatus, new_message_id
from leadmail.domain.idempotency import Claim, ClaimState, new_claim_token
from leadmail.domain.keys import ApiKey
from leadmail.domain.leads import Lead
from leadmail.domain.segments import LeadFilter
from leadmail.ports.activity import ActivityCounts
from leadmail.ports.campaigns import CampaignRepository, RecipientRepository
from leadmail.ports.idempotency import IdempotencyStore
from leadmail.ports.keys import ApiKeyStore
from leadmail.ports.lead_actions import LeadActionRepository
from leadmail.ports.lead_events import LeadEventRepository
from leadmail.ports.lead_imports import LeadImportRepository
from leadmail.ports.leads import LeadRepository
from leadmail.ports.messages import MessageRepository
from leadmail.ports.quotas import QuotaRepository
from leadmail.ports.sender_domains import SenderDomainRepository
from leadmail.ports.suppressions import SuppressionRepository
from leadmail.ports.templates import AccountTemplateRepository, TemplateRepository
from leadmail.ports.users import UserStore

# Millisecond precision, as the service's clock produces (domain/clock.py).
T0 = datetime(2026, 11, 22, 10, 15, 30, 123_000, tzinfo=UTC)
# Leads per frozen batch of a bulk action in the contract tests (5,000 in service): a few
# leads make several batches.
ACTION_BATCH_IN_TESTS = 2


def moment(milliseconds: int) -> datetime:
    """``T0`` moved by a number of milliseconds."""
    return T0 + timedelta(milliseconds=milliseconds)


def unique_account_name() -> str:
    return "acct-" + secrets.token_hex(8)


def unique_address() -> str:
    return f"staff-{secrets.token_hex(6)}@school.example"


def unique_digest() -> str:
    return secrets.token_hex(32)  # 64 hex characters, the shape of a SHA-256 digest


def unique_lead_id() -> str:
    # Lower-case hex only, so the order of ids is the same under any database collation.
    return "ld_" + secrets.token_hex(11)


async def new_account_key(keys: ApiKeyStore, *, label: str, prefix: str) -> ApiKey:
    """The first key of a new account (a unique name and digest), made at ``T0``."""
    return await keys.create_key(
        account_name=unique_account_name(),
        label=label,
        digest=unique_digest(),
        prefix=prefix,
        now=T0,
    )


def a_lead(
    account_id: str,
    *,
    email: str | None = None,
    name: str = "Ada Lovelace",
    source: str = "webinar",
    note: str = "",
    phone: str = "",
    created_at: datetime = T0,
    updated_at: datetime | None = None,
    lead_id: str | None = None,
    tags: tuple[str, ...] = (),
    fields: dict[str, FieldValue] | None = None,
) -> Lead:
    return Lead(
        lead_id=lead_id or unique_lead_id(),
        account_id=account_id,
        name=name,
        email=email or f"lead-{secrets.token_hex(4)}@example.com",
        source=source,
        note=note,
        created_at=created_at,
        updated_at=created_at if updated_at is None else updated_at,
        phone=phone,
        tags=tags,
        fields={} if fields is None else fields,
    )


def a_message(
    account_id: str,
    *,
    to: tuple[str, ...] = ("ada@example.com",),
    subject: str = "Welcome aboard",
    template_id: str | None = None,
    created_at: datetime = T0,
    message_id: str | None = None,
) -> Message:
    return Message(
        message_id=message_id or new_message_id(),
        account_id=account_id,
        sender='"Course Team" <team@example.com>',
        to=to,
        subject=subject,
        template_id=template_id,
        status=MessageStatus.PENDING,
        provider="console",
        provider_message_id=None,
        attempts=0,
        last_error="",
        created_at=created_at,
        updated_at=created_at,
    )


def a_campaign(
    account_id: str,
    *,
    audience: LeadFilter | None = None,
    status: CampaignStatus = CampaignStatus.DRAFT,
    created_at: datetime = T0,
    **changes: object,
) -> Campaign:
    """A draft campaign of the "welcome" template (other fields by keyword)."""
    fields: dict[str, object] = {
        "campaign_id": new_campaign_id(),
        "account_id": account_id,
        "name": "March open day",
        "template_id": "welcome",
        "audience": audience if audience is not None else LeadFilter(),
        "sender": '"Course Team" <team@example.com>',
        "status": status,
        "created_at": created_at,
        "updated_at": created_at,
        **changes,
    }
    return Campaign(**fields)  # type: ignore[arg-type]


def a_claim(
    account_id: str,
    *,
    key: str | None = None,
    fingerprint: str = "f" * 64,
    created_at: datetime = T0,
) -> Claim:
    return Claim(
        account_id=account_id,
        key=key or "key-" + secrets.token_hex(8),
        fingerprint=fingerprint,
        token=new_claim_token(),
        state=ClaimState.RUNNING,
        message_ids=(),
        created_at=created_at,
        updated_at=created_at,
    )


@dataclass(frozen=True)
class Storage:
    """The storage ports of one adapter, sharing one database."""

    kind: str
    leads: LeadRepository
    keys: ApiKeyStore
    templates: TemplateRepository
    messages: MessageRepository
    claims: IdempotencyStore
    imports: LeadImportRepository
    campaigns: CampaignRepository
    recipients: RecipientRepository
    suppressions: SuppressionRepository
    sender_domains: SenderDomainRepository
    account_templates: AccountTemplateRepository
    lead_events: LeadEventRepository
    lead_actions: LeadActionRepository
    quotas: QuotaRepository
    users: UserStore
    activity: ActivityCounts
    # The database behind the Piccolo adapters, for what no port shows (None for memory).
    database: Database | None = None

    async def new_account(self) -> str:
        """A new account, made the way the service makes one: with its first key.

        On SQL stores leads reference accounts by foreign key, so they need a real one.
        """
        key = await new_account_key(self.keys, label="contract tests", prefix="lm_contract")
        return key.account_id


def is_utc(moment_: datetime) -> bool:
    return moment_.tzinfo is not None and moment_.utcoffset() == timedelta(0)
