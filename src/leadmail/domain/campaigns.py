"""Campaigns: one template sent to every lead of a segment, in the background. A campaign's
statuses and the transitions between them (the issue's table, nothing else), and what its
recipients count up to."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from leadmail.domain.errors import DomainError
from leadmail.domain.ids import id_rule, new_id
from leadmail.domain.segments import LeadFilter

CAMPAIGN_ID_PREFIX = "cmp_"
CAMPAIGN_ID = id_rule(CAMPAIGN_ID_PREFIX)
RATE_WINDOW = timedelta(minutes=1)  # rate_per_minute: the sends of the last minute


def new_campaign_id() -> str:
    """128 random bits, URL-safe: unique across accounts (the CLI finds a campaign by it)."""
    return new_id(CAMPAIGN_ID_PREFIX)


# The error of a campaign message recorded but never sent: its batch was handed back (the
# campaign paused or stopped while it waited for the provider's pace) and its recipient
# goes in another message. Recorded failed so no send takes it; no outcome of mail.
HANDED_BACK = "not sent: its recipient was handed back to the campaign, to go in another message"


class CampaignStatus(enum.StrEnum):
    DRAFT = "draft"  # created with ``draft``: waits for start
    SCHEDULED = "scheduled"  # started, its audience frozen; sends from ``send_at``
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"  # no recipient left pending
    FAILED = "failed"  # could not go on (``failure_reason``)
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (CampaignStatus.DONE, CampaignStatus.FAILED, CampaignStatus.CANCELLED)

    @property
    def frozen(self) -> bool:
        """Its recipients are stored (every status but draft)."""
        return self is not CampaignStatus.DRAFT


class CampaignNotFound(DomainError):
    """No campaign with that id in the caller's account (another account's included)."""

    code = "CAMPAIGN_NOT_FOUND"

    def __init__(self, campaign_id: str) -> None:
        super().__init__(f"Campaign {campaign_id!r} was not found")
        self.campaign_id = campaign_id


class CampaignStateConflict(DomainError):
    """The action does not apply to the campaign as it is now: the message names its
    status (and the statuses the action applies to)."""

    code = "CAMPAIGN_STATE"

    def __init__(self, campaign_id: str, status: CampaignStatus, action: str) -> None:
        allowed = either(ALLOWED_FROM[action])
        super().__init__(
            f"Campaign {campaign_id!r} is {status}: it cannot {_AS_SAID.get(action, action)}"
            f" (only a campaign that is {allowed} can)"
        )
        self.campaign_id = campaign_id
        self.status = status
        self.action = action


def either(statuses: tuple[CampaignStatus, ...]) -> str:
    """The statuses as a sentence lists them: "draft", "scheduled or running",
    "draft, scheduled, running or paused"."""
    names = [str(s) for s in statuses]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


class AudienceEmpty(DomainError):
    """The audience matches no lead of the account: nothing would be sent."""

    code = "AUDIENCE_EMPTY"

    def __init__(self) -> None:
        super().__init__("The audience matches no lead of your account: nothing would be sent")


_S = CampaignStatus
PAUSED_MANUAL = "manual"
PAUSED_QUOTA = "quota"
# The table: which statuses each action (and each change the service makes by
# itself) applies to.
ALLOWED_FROM: dict[str, tuple[CampaignStatus, ...]] = {
    "start": (_S.DRAFT,),
    "pause": (_S.SCHEDULED, _S.RUNNING),
    "resume": (_S.PAUSED,),
    "cancel": (_S.DRAFT, _S.SCHEDULED, _S.RUNNING, _S.PAUSED),
    "begin": (_S.SCHEDULED,),  # by itself, at send_at
    "finish": (_S.RUNNING,),  # by itself, no recipient pending
    "fail": (_S.RUNNING,),  # by itself, it cannot go on
    "edit": (_S.DRAFT, _S.SCHEDULED),  # its body changed (a scheduled one is frozen anew)
    "delete": (_S.DRAFT,),  # a campaign that started is history
}
# How a refusal says the actions done to a campaign rather than by it.
_AS_SAID = {"edit": "be changed", "delete": "be deleted"}


@dataclass(frozen=True, slots=True)
class Campaign:
    """One campaign. ``variables`` are shared values: they fill what a lead lacks (a
    lead's own value wins). ``sender`` and ``reply_to`` are formatted addresses."""

    campaign_id: str
    account_id: str
    name: str
    template_id: str
    audience: LeadFilter
    sender: str
    status: CampaignStatus
    created_at: datetime
    updated_at: datetime
    variables: Mapping[str, str] = field(default_factory=dict)
    reply_to: str | None = None
    send_at: datetime | None = None
    failure_reason: str = ""
    started_at: datetime | None = None  # when it first ran (kept across pauses)
    finished_at: datetime | None = None
    # The template's version, and its layout's, frozen when it starts: an edit of either
    # never changes a campaign that has started (None: a draft; or one started before
    # templates had versions, which sends the current version).
    template_version: int | None = None
    layout_id: str | None = None
    layout_version: int | None = None
    # Why it is paused: PAUSED_MANUAL (a client's pause) or PAUSED_QUOTA (its account's
    # daily quota reached: it resumes by itself when the next UTC day begins); "" else.
    paused_reason: str = ""

    # The transitions: a new value of the campaign, or CampaignStateConflict naming the
    # status it has. Persisting one is a compare-and-set on the status it came from.

    def start(self, now: datetime) -> Campaign:
        self._check("start")
        return self._run_or_wait(now)

    def pause(self, now: datetime, reason: str = PAUSED_MANUAL) -> Campaign:
        self._check("pause")
        return replace(self, status=_S.PAUSED, updated_at=now, paused_reason=reason)

    def resume(self, now: datetime) -> Campaign:
        self._check("resume")
        return replace(self._run_or_wait(now), paused_reason="")

    def cancel(self, now: datetime) -> Campaign:
        self._check("cancel")
        return replace(self, status=_S.CANCELLED, updated_at=now, finished_at=now, paused_reason="")

    def begin(self, now: datetime) -> Campaign:
        """Scheduled -> running, once ``send_at`` has come (before it: unchanged)."""
        self._check("begin")
        return self._run_or_wait(now)

    def finish(self, now: datetime) -> Campaign:
        self._check("finish")
        return replace(self, status=_S.DONE, updated_at=now, finished_at=now)

    def fail(self, now: datetime, reason: str) -> Campaign:
        self._check("fail")
        return replace(
            self, status=_S.FAILED, failure_reason=reason, updated_at=now, finished_at=now
        )

    def edit(self, body: Campaign, now: datetime) -> Campaign:
        """Its body (name, template, audience, variables, sender, reply_to, send_at)
        replaced by ``body``'s, as a draft: a scheduled campaign goes back to draft, its
        audience and template version to be frozen anew when it starts again."""
        self._check("edit")
        return replace(
            body,
            campaign_id=self.campaign_id,
            account_id=self.account_id,
            status=_S.DRAFT,
            created_at=self.created_at,
            updated_at=now,
            failure_reason="",
            started_at=None,
            finished_at=None,
            template_version=None,
            layout_id=None,
            layout_version=None,
        )

    def check(self, action: str) -> None:
        """CampaignStateConflict unless ``action`` applies to the campaign as it is."""
        self._check(action)

    def waits(self, now: datetime) -> bool:
        """``send_at`` is still ahead."""
        return self.send_at is not None and self.send_at > now

    def _run_or_wait(self, now: datetime) -> Campaign:
        if self.waits(now):
            return replace(self, status=_S.SCHEDULED, updated_at=now)
        started = self.started_at if self.started_at is not None else now
        return replace(self, status=_S.RUNNING, updated_at=now, started_at=started)

    def _check(self, action: str) -> None:
        if self.status not in ALLOWED_FROM[action]:
            raise CampaignStateConflict(self.campaign_id, self.status, action)


class RecipientStatus(enum.StrEnum):
    PENDING = "pending"
    SENDING = "sending"  # claimed by a worker; shown and counted as pending
    SENT = "sent"
    FAILED = "failed"  # the provider refused the message
    SKIPPED = "skipped"  # a template variable had no value for this lead (``error``)
    SUPPRESSED = "suppressed"  # its address is on the suppression list: never sent
    UNKNOWN = "unknown"  # the worker stopped between the provider's call and its answer
    CANCELLED = "cancelled"

    @property
    def shown(self) -> RecipientStatus:
        """As a client sees it: ``sending`` is ``pending``."""
        return RecipientStatus.PENDING if self is RecipientStatus.SENDING else self

    @property
    def final(self) -> bool:
        return self not in (RecipientStatus.PENDING, RecipientStatus.SENDING)


@dataclass(frozen=True, slots=True)
class CampaignCounts:
    """The recipients by status, as shown (``sending`` is ``pending``). ``total`` is their
    sum: it cannot disagree with them."""

    pending: int = 0
    sent: int = 0
    failed: int = 0
    skipped: int = 0
    suppressed: int = 0
    unknown: int = 0
    cancelled: int = 0

    @property
    def total(self) -> int:
        return (
            self.pending
            + self.sent
            + self.failed
            + self.skipped
            + self.suppressed
            + self.unknown
            + self.cancelled
        )

    @classmethod
    def of(cls, by_status: Mapping[RecipientStatus, int]) -> CampaignCounts:
        shown: dict[str, int] = {}
        for status, count in by_status.items():
            name = str(status.shown)
            shown[name] = shown.get(name, 0) + count
        return cls(**shown)


def rate_per_minute(sent: int, window: timedelta) -> int:
    """Recipients sent per minute, from ``sent`` in the last ``window`` (at most a minute;
    shorter while the campaign has run less than that)."""
    seconds = window.total_seconds()
    if seconds <= 0:
        return 0
    return round(sent * 60 / seconds)


def eta_seconds(status: CampaignStatus, pending: int, per_minute: int) -> int | None:
    """Seconds until the pending recipients are sent at the current rate, while running."""
    if status is not CampaignStatus.RUNNING or per_minute <= 0:
        return None
    return math.ceil(pending * 60 / per_minute)
