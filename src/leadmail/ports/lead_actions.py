"""Where bulk actions on segments are kept (domain/lead_actions.py), with the leads each
froze, and where a batch of them is applied to the leads."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from leadmail.domain.lead_actions import ActionBatch, ActionOutcome, LeadAction


class LeadActionRepository(Protocol):
    """Every bulk action of every account. Raises StorageUnavailable when the store cannot
    be reached."""

    async def create(self, action: LeadAction) -> None:
        """Store a new action (status ``queued``)."""
        ...

    async def get(self, account_id: str, action_id: str) -> LeadAction | None: ...

    async def claim(self, action_id: str, runner: str, now: datetime) -> LeadAction | None:
        """Make ``runner`` the action's runner and set it ``running``, unless it is
        finished or gone (None). A runner taking over from one that stopped continues
        from the last batch written; the one it replaced can write no more batches. A
        runner other than the last adds one to ``attempts``."""
        ...

    async def freeze(self, action_id: str, runner: str, now: datetime) -> LeadAction | None:
        """Unless the action's leads are frozen already: freeze them, the account's leads
        that are in its segment now and were created at or before the action, each given
        its position (1, 2, ... oldest first), in batches of the store's size, and set
        ``total``. The action as it is then; None if ``runner`` no longer runs it."""
        ...

    async def remaining(self, action_id: str) -> list[tuple[int, int]]:
        """The frozen batches not applied yet, in order: (start, end) positions, for
        ActionBatch."""
        ...

    async def apply(self, batch: ActionBatch) -> ActionOutcome | None:
        """Apply the action to the frozen leads of the batch that are still stored
        (tags changed with a ``tags_changed`` event on each lead's timeline, or leads
        deleted), and add the batch's counts to the action's (``done`` by the batch's
        size, ``attempts`` back to 0): all or nothing, and once. A lead that would get more
        than MAX_TAGS tags is left as it is and counted failed. Batches of one action may
        be applied at once, on several connections. None, with nothing written, if the
        action is no longer ``batch.runner``'s; an outcome with ``applied`` False, with
        nothing written, if the batch was applied before."""
        ...

    async def finish(
        self, action_id: str, runner: str, now: datetime, error: str | None = None
    ) -> LeadAction | None:
        """``done`` (``error`` None) or ``failed`` with the reason; None if ``runner``
        (empty: anyone) no longer runs it. Its frozen leads are forgotten."""
        ...

    async def unfinished(self) -> list[LeadAction]:
        """Actions ``queued`` or ``running``, of every account, oldest first."""
        ...
