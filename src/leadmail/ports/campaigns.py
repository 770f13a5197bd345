"""Where campaigns and their recipients are kept. The recipient rows are the truth of what
was sent to whom; the job queue only wakes the workers that send."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from leadmail.domain.campaign_recipients import LeasedBatch, Recipient, RecipientOutcome
from leadmail.domain.campaigns import Campaign, CampaignCounts, CampaignStatus, RecipientStatus
from leadmail.domain.lead_listing import PageCursor


class CampaignRepository(Protocol):
    """Every campaign of every account. Raises StorageUnavailable when the store cannot
    be reached."""

    async def add(self, campaign: Campaign) -> None:
        """Store a new campaign."""
        ...

    async def get(self, account_id: str, campaign_id: str) -> Campaign | None:
        """The account's campaign; None for another account's, as for a missing one."""
        ...

    async def find(self, campaign_id: str) -> Campaign | None:
        """The campaign of any account (ids are unique across accounts): for the worker
        and the command line, never for a client's request."""
        ...

    async def save(self, campaign: Campaign, expected: CampaignStatus) -> Campaign | None:
        """Write ``campaign``'s transition over the stored one (its status, failure reason,
        moments and frozen versions; its body stays as stored) only if the stored status
        is still ``expected``: a compare-and-set, so of two changes made at once from one
        status, one lands and the other gets None (read it again and decide anew)."""
        ...

    async def rewrite(self, campaign: Campaign, expected: CampaignStatus) -> Campaign | None:
        """Write the whole of ``campaign`` (its body too: an edit) over the stored one, if
        the stored status is still ``expected`` (a compare-and-set, as ``save``)."""
        ...

    async def remove(self, campaign: Campaign, expected: CampaignStatus) -> bool:
        """Delete the campaign (its recipients with it) if its stored status is still
        ``expected``; False when it changed or is gone."""
        ...

    async def using(self, account_id: str, template_id: str) -> list[str]:
        """The ids of the account's campaigns that have not finished (draft, scheduled,
        running, paused) whose template, or frozen layout, is ``template_id``: oldest
        first."""
        ...

    async def active(self) -> list[Campaign]:
        """The campaigns of every account that are ``running`` or ``scheduled``, oldest
        first (to queue their jobs again when a server starts)."""
        ...

    async def list(
        self, account_id: str, limit: int, after: PageCursor | None = None
    ) -> list[Campaign]:
        """Up to ``limit + 1`` of the account's campaigns, newest first ((created_at,
        campaign_id) descending), strictly after ``after`` (``after.lead_id`` holds the
        campaign id of the position)."""
        ...


class RecipientRepository(Protocol):
    """The recipients of every campaign, by campaign id (unique across accounts: the
    caller has checked the campaign is the account's). Postgres lets any number of
    workers share a campaign; SQLite and memory serve one process. Raises
    StorageUnavailable when the store cannot be reached."""

    async def freeze(self, campaign: Campaign, required: Sequence[str] = ()) -> int:
        """Store one recipient per lead of ``campaign.audience`` in its account, as the
        leads are now (the lead's id and email), in one statement; a lead already a
        recipient of the campaign is left as it is, so freezing twice adds nothing.
        ``required``: custom field keys the template needs that the campaign's shared
        variables do not give; a lead without one of them is stored ``skipped`` (its
        error names the first it lacks: ``lacks_variable``), the others ``pending``.
        Returns how many recipients it added."""
        ...

    async def lease(
        self, campaign_id: str, limit: int, *, now: datetime, lease_until: datetime
    ) -> LeasedBatch | None:
        """A batch of recipients for one worker, held until ``lease_until``; None when
        there is none, and always None unless the campaign is ``running``.

        First a batch that ``expire`` left retryable, whole and as it was (the same
        batch_id, recipients and message ids; ``retried`` True) with a new lease_id and
        lease. Else up to ``limit`` pending recipients, the first in lead id order, as a
        new batch: a new batch_id and lease_id, a new message id each, status
        ``sending``. Two leases at once never share a recipient (Postgres: FOR UPDATE
        SKIP LOCKED; SQLite and memory: one writer). ``now`` stamps updated_at."""
        ...

    async def record(
        self, batch: LeasedBatch, outcomes: Sequence[RecipientOutcome], now: datetime
    ) -> int:
        """Write each outcome's status and error over its recipient, with its lease ended;
        a skipped or suppressed one loses its message id, the others keep theirs. Only
        recipients still ``sending`` under this very lease (``batch.lease_id``) are
        written: once the batch was leased again (its lease expired), or released,
        expired as unknown or cancelled, a late worker writes nothing. Returns how many
        it wrote."""
        ...

    async def release(self, batch: LeasedBatch, now: datetime) -> int:
        """Give back a batch leased but not sent (the campaign was paused, the worker is
        stopping): its recipients still ``sending`` under this lease go back to
        ``pending`` without their batch and message ids, to be leased anew. A
        ``retried`` batch (its first try may have landed) is left retryable as it was
        instead. Returns how many recipients it gave back."""
        ...

    async def expire(self, campaign_id: str, now: datetime, *, retryable: bool) -> int:
        """The recipients ``sending`` in batches whose lease ended before ``now`` (their
        worker stopped between leasing and recording). ``retryable`` (the provider
        keeps an idempotency key, so sending the batch again with its batch_id as the key
        can deliver nothing twice): left ``sending`` and marked retryable, for ``lease``
        to hand out whole, as it was; a late record of the old lease still lands until
        then. Otherwise: ``unknown``, with the error STOPPED, never sent again. Returns
        how many recipients it changed."""
        ...

    async def cancel_pending(self, campaign_id: str, now: datetime, *, failure: str = "") -> int:
        """Every ``pending`` recipient becomes ``cancelled``; a batch left retryable
        becomes ``unknown`` (its first try may have landed). Their errors are
        ``stopped_errors(failure)``'s: ``failure`` is the reason a failed campaign failed
        ("": it was cancelled). Batches being sent are left to their workers. Returns how
        many it changed."""
        ...

    async def forget(self, campaign_id: str) -> int:
        """Delete the campaign's ``pending`` and ``skipped`` recipients (a scheduled
        campaign edited back to draft, to be frozen anew); a recipient in any other status
        stays. Returns how many it deleted."""
        ...

    async def counts(self, campaign_id: str) -> CampaignCounts:
        """The recipients by status (``sending`` counted as ``pending``)."""
        ...

    async def counts_of(self, campaign_ids: Sequence[str]) -> dict[str, CampaignCounts]:
        """``counts`` of several campaigns at once (one query: a page of campaigns), by
        campaign id; a campaign without recipients is absent."""
        ...

    async def page(
        self,
        campaign_id: str,
        status: RecipientStatus | None,
        limit: int,
        after: str | None = None,
    ) -> list[Recipient]:
        """Up to ``limit + 1`` recipients in lead id order, after the lead id ``after``;
        only those of ``status`` when given (``pending`` includes ``sending``)."""
        ...

    async def sent_since(self, campaign_id: str, since: datetime) -> int:
        """How many recipients became ``sent`` at ``since`` or later."""
        ...
