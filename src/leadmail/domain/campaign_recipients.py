"""A campaign's recipients: one per lead of its audience, frozen when it starts. The
recipient rows are the truth of what was sent; the job queue only drives the work."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from leadmail.domain.campaigns import Campaign, RecipientStatus
from leadmail.domain.email import (
    MAX_DISPLAY_NAME,
    Mailbox,
    OutgoingEmail,
    check_subject,
    has_control,
)
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_variables import template_variables
from leadmail.domain.leads import Lead
from leadmail.domain.templates import CompiledTemplate, Template
from leadmail.domain.unsubscribe import UNSUBSCRIBE_URL, unsubscribe_headers

BATCH_ID_PREFIX = "bat_"
# The error of a recipient left ``unknown`` (expire, not retryable).
STOPPED = "the worker stopped before recording the provider's answer"
# Of a retryable batch left when its campaign is cancelled: its first try may have landed.
CANCELLED_UNKNOWN = "the campaign was cancelled before a retry could learn the outcome"
# Of a retried batch refused (409) for its key: an earlier try landed, under the same key,
# a batch not quite this one (a lead deleted or changed since). Not sent again.
LANDED_BEFORE = (
    "an earlier try of its batch reached the provider, which refused the retry ({}):"
    " not sent again, the earlier try's outcome is unknown"
)


def stopped_errors(failure: str = "") -> tuple[str, str]:
    """The errors written when a campaign ends with recipients left: on a ``pending`` one
    (made ``cancelled``) and on a retryable batch's (made ``unknown``); for a campaign
    cancelled (no error on the cancelled), or one that failed for ``failure``."""
    if not failure:
        return "", CANCELLED_UNKNOWN
    return (
        f"not sent: the campaign failed ({failure})",
        f"the campaign failed ({failure}) before a retry could learn the outcome",
    )


# The error of a recipient skipped because its lead was deleted after the start.
LEAD_DELETED = "the lead was deleted before its message was sent"


def new_batch_id() -> str:
    """A batch's id; also the provider's Idempotency-Key for it (kept for a retry)."""
    return BATCH_ID_PREFIX + secrets.token_urlsafe(16)


def new_lease_id() -> str:
    """Who holds a batch now: a new one per lease, so a worker that lost its batch (its
    lease expired and another took it again) can record nothing."""
    return secrets.token_hex(12)


def lacks_variable(name: str) -> str:
    """The error of a recipient skipped for a template variable it has no value for."""
    return (
        f"the lead has no custom field `{name}` for the template's variable of that name,"
        " and `variables` does not give it"
    )


def values_for(campaign: Campaign, lead: Lead) -> dict[str, str]:
    """What a campaign's template is filled with for one lead: its shared ``variables``,
    with the lead's own variables over them (the lead's value wins)."""
    return {**campaign.variables, **template_variables(lead)}


@dataclass(frozen=True, slots=True)
class Recipient:
    """One lead of a campaign's frozen audience. ``message_id`` is ours, given when the
    recipient is first leased and kept for a retry; ``batch_id`` the batch that holds
    it; ``lease_until`` when that batch's worker's hold ends."""

    campaign_id: str
    lead_id: str
    email: str
    status: RecipientStatus
    updated_at: datetime
    message_id: str | None = None
    batch_id: str | None = None
    lease_until: datetime | None = None
    error: str = ""


@dataclass(frozen=True, slots=True)
class LeasedBatch:
    """Recipients a worker holds (status ``sending``) until ``lease_until``, in lead order.

    ``retried``: the batch was leased before and expired while its provider call may have
    landed; it comes back as it was (the same ``batch_id``, recipients and message ids),
    its messages already stored: send it again with ``batch_id`` as the Idempotency-Key.
    ``lease_id`` is this lease's own: recording with it writes nothing once the batch was
    leased again."""

    campaign_id: str
    batch_id: str
    lease_id: str
    lease_until: datetime
    recipients: Sequence[Recipient]
    retried: bool = False


@dataclass(frozen=True, slots=True)
class RecipientOutcome:
    """What became of one recipient of a batch: a final status (sent, failed, skipped,
    suppressed, unknown) and why, for any but sent. A skipped or suppressed recipient has
    no message: its message id is dropped."""

    lead_id: str
    status: RecipientStatus
    error: str = ""

    def __post_init__(self) -> None:
        if not self.status.final or self.status is RecipientStatus.CANCELLED:
            raise ValueError(f"not an outcome of a send: {self.status}")

    @property
    def keeps_message(self) -> bool:
        return self.status not in (RecipientStatus.SKIPPED, RecipientStatus.SUPPRESSED)


@dataclass(frozen=True, slots=True)
class Letter:
    """What every message of a campaign shares: its template and addresses, read once."""

    campaign: Campaign
    template: Template
    sender: Mailbox
    reply_to: Mailbox | None
    compiled: CompiledTemplate  # the template read once for every recipient

    @classmethod
    def of(cls, campaign: Campaign, template: Template) -> Letter:
        # Read as stored: checked by parse_sender when the campaign was made, so a rule
        # added since (no @ in a display name) refuses new campaigns, and does not stop
        # one already running on a batch it cannot parse.
        reply_to = campaign.reply_to
        return cls(
            campaign,
            template,
            Mailbox.parse(campaign.sender),
            None if reply_to is None else Mailbox.parse(reply_to),
            template.compiled(),
        )


def render_for(
    letter: Letter, recipient: Recipient, lead: Lead | None, unsubscribe_url: str
) -> OutgoingEmail | str:
    """The message of one recipient: the template filled with the lead's values over the
    campaign's shared ones, to the address frozen at the start (with the lead's name when
    it can be a display name), carrying the recipient's own ``unsubscribe_url`` in
    RFC 8058's headers (and in the template's ``{{unsubscribe_url}}``, whatever a lead or
    the campaign says it is). Or why it is skipped: the lead is gone, a variable has no
    value (``lacks_variable``), or a value cannot go in the subject."""
    template = letter.compiled
    if lead is None:
        return LEAD_DELETED
    values = values_for(letter.campaign, lead)
    if UNSUBSCRIBE_URL in template.variables:
        values[UNSUBSCRIBE_URL] = unsubscribe_url
    lacking = next((name for name in template.variables if name not in values), None)
    if lacking is not None:
        return lacks_variable(lacking)
    try:
        rendered = template.render(values)
        subject = check_subject(rendered.subject)
    except ValidationFailed as e:
        return "; ".join(f"`{x.field}` {x.message}" for x in e.errors)
    name = lead.name.strip()
    if has_control(name) or len(name) > MAX_DISPLAY_NAME:
        name = ""
    return OutgoingEmail(
        sender=letter.sender,
        to=(Mailbox(recipient.email, name),),
        subject=subject,
        html=rendered.html,
        reply_to=letter.reply_to,
        headers=unsubscribe_headers(unsubscribe_url),
        text=rendered.text,
    )
