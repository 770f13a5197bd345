"""A campaign as a client asks for it, checked: its fields (every broken one named at
once), then against the data at creation and again at start: the account may use its
sender, the template exists, the audience matches leads, and every template variable has a
source."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar

from leadmail.domain.campaigns import AudienceEmpty, Campaign, CampaignStatus, new_campaign_id
from leadmail.domain.email import Mailbox, parse_sender
from leadmail.domain.errors import FieldError, ValidationFailed
from leadmail.domain.lead_variables import EVERY_LEAD_HAS
from leadmail.domain.leads import RULES
from leadmail.domain.segments import LeadFilter, moment
from leadmail.domain.templates import check_variables_size
from leadmail.domain.unsubscribe import SERVICE_VARIABLES
from leadmail.ports.leads import LeadRepository
from leadmail.services.addressing import Addressing
from leadmail.services.sender_rules import SenderRules
from leadmail.services.templates import TemplateService

T = TypeVar("T")
MAX_VARIABLES = 100  # shared values a campaign may hold
NO_SOURCE = (
    "is used by the template, and no lead of the audience has a custom field of that name:"
    " give it in `variables`"
)


@dataclass(frozen=True, slots=True)
class CampaignRequest:
    """``audience``: the segment as a JSON object (LeadFilter.from_json); ``send_at``:
    RFC 3339; ``draft``: wait for a start."""

    name: str
    template_id: str
    audience: Mapping[str, object] = field(default_factory=dict)
    variables: Mapping[str, str] = field(default_factory=dict)
    sender: str | None = None
    reply_to: str | None = None
    send_at: str | None = None
    draft: bool = False


@dataclass(frozen=True, slots=True)
class CampaignEdit:
    """The fields of a CampaignRequest a client gave to change a campaign, by name (not
    ``draft``): the others stay as stored; None clears ``reply_to`` and ``send_at`` and
    gives ``sender`` the account's default."""

    given: Mapping[str, object]

    def over(self, current: Campaign) -> CampaignRequest:
        """The request that makes the campaign as edited (checked as a creation is)."""
        stored = CampaignRequest(
            name=current.name,
            template_id=current.template_id,
            audience=current.audience.to_json(),
            variables=dict(current.variables),
            sender=current.sender,
            reply_to=current.reply_to,
            send_at=None if current.send_at is None else current.send_at.isoformat(),
        )
        return replace(stored, **self.given)  # type: ignore[arg-type]


class CampaignChecks:
    def __init__(
        self,
        templates: TemplateService,
        leads: LeadRepository,
        addressing: Addressing,
        senders: SenderRules,
    ) -> None:
        self._templates = templates
        self._leads = leads
        self._addressing = addressing
        self._senders = senders

    def campaign_of(self, account_id: str, request: CampaignRequest, now: datetime) -> Campaign:
        """The campaign asked for, as a draft. Raises ValidationFailed naming every broken
        field (an audience's filter as ``audience.<name>``)."""
        errors: list[FieldError] = []
        name = _field(errors, "name", lambda: RULES["name"](request.name), "")
        audience = _audience(errors, request.audience)
        _variables(errors, request.variables)
        send_at, reply_to = None, None
        if request.send_at is not None:
            when = request.send_at
            send_at = _field(errors, "send_at", lambda: moment(when), None)
        if request.reply_to is not None:
            address = request.reply_to
            reply_to = _checked(errors, lambda: parse_sender(address, "reply_to").formatted())
        sender = _checked(errors, lambda: self._addressing.sender(request.sender))
        if errors or sender is None:
            raise ValidationFailed(errors)
        return Campaign(
            campaign_id=new_campaign_id(),
            account_id=account_id,
            name=name,
            template_id=request.template_id,
            audience=audience,
            sender=sender.formatted(),
            status=CampaignStatus.DRAFT,
            created_at=now,
            updated_at=now,
            variables=dict(request.variables),
            reply_to=reply_to,
            send_at=send_at,
        )

    async def matching(self, campaign: Campaign) -> int:
        """How many leads the campaign's audience matches now."""
        return await self._leads.count(campaign.account_id, campaign.audience)

    async def against_data(self, campaign: Campaign) -> list[str]:
        """The checks of a campaign's data, in this order: SenderNotAllowed (its ``from``
        or ``reply_to`` against the account's sender domains as they are now),
        TemplateNotFound, AudienceEmpty, ValidationFailed naming each ``variables.<name>``
        the template uses that neither ``variables`` nor any lead of the audience can
        supply (or a shared value it cannot take). Returns the custom field keys each lead
        must have (else it is skipped)."""
        # Stored addresses were checked when the campaign was made: read, not judged again.
        reply_to = None if campaign.reply_to is None else Mailbox.parse(campaign.reply_to)
        await self._senders.check(campaign.account_id, Mailbox.parse(campaign.sender), reply_to)
        template = await self._templates.sendable(campaign.account_id, campaign.template_id)
        account, audience = campaign.account_id, campaign.audience
        if await self._leads.count(account, audience) == 0:
            raise AudienceEmpty()
        shared = campaign.variables
        # What the service fills for each recipient (unsubscribe_url) is never asked for.
        wanted = template.client_variables
        supplied = (
            EVERY_LEAD_HAS | set(shared) | set(await self._leads.field_keys(account, audience))
        )
        missing = [name for name in wanted if name not in supplied]
        if missing:
            raise ValidationFailed([FieldError(f"variables.{name}", NO_SOURCE) for name in missing])
        # Shared values the subject cannot take (line breaks): refused now, not per lead.
        given = {k: v for k, v in shared.items() if k not in SERVICE_VARIABLES}
        template.render({**dict.fromkeys(template.variables, ""), **given})
        return [n for n in wanted if n not in EVERY_LEAD_HAS and n not in shared]

    async def frozen(self, campaign: Campaign) -> Campaign:
        """The campaign with its template's version, and its layout's, as they are now
        (what it sends from then on). Raises TemplateNotFound."""
        template, layout_version = await self._templates.frozen(
            campaign.account_id, campaign.template_id
        )
        return replace(
            campaign,
            template_version=template.version,
            layout_id=template.layout_id,
            layout_version=layout_version,
        )


def _field(errors: list[FieldError], name: str, check: Callable[[], T], fallback: T) -> T:
    """``check()``, or ``fallback`` with its ValueError kept as the field's error."""
    try:
        return check()
    except ValueError as e:
        errors.append(FieldError(name, str(e)))
        return fallback


def _checked(errors: list[FieldError], check: Callable[[], T]) -> T | None:
    """``check()``, or None with the fields its ValidationFailed names kept."""
    try:
        return check()
    except ValidationFailed as e:
        errors.extend(e.errors)
        return None


def _audience(errors: list[FieldError], given: Mapping[str, object]) -> LeadFilter:
    try:
        return LeadFilter.from_json(given)
    except ValidationFailed as e:
        errors.extend(FieldError(f"audience.{f.field}", f.message) for f in e.errors)
        return LeadFilter()


def _variables(errors: list[FieldError], given: Mapping[str, str]) -> None:
    if len(given) > MAX_VARIABLES:
        errors.append(FieldError("variables", f"must hold at most {MAX_VARIABLES} values"))
    try:
        check_variables_size(given)
    except ValidationFailed as e:
        errors.extend(e.errors)
    for name, value in given.items():
        if "\x00" in name or "\x00" in value:
            errors.append(FieldError(f"variables.{name}", "must not contain NUL characters"))
