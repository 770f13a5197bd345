"""What a purge removes, a batch at a time (domain/retention.py): each call is one short
transaction that removes at most ``limit`` rows of its kind (or, for messages, ``limit``
messages with what hangs on them) and says how many it removed: 0 when nothing older is
left. Raises StorageUnavailable."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from leadmail.domain.retention import MessageBatch


class RetentionStore(Protocol):
    async def purge_claims(self, before: datetime, limit: int) -> int:
        """Idempotency claims created before ``before``."""
        ...

    async def accounts_with_messages(self, before: datetime) -> list[str]:
        """The accounts holding a message created before ``before``."""
        ...

    async def purge_messages(self, account_id: str, before: datetime, limit: int) -> MessageBatch:
        """The account's oldest messages created before ``before``, up to ``limit``: each
        with its provider events and its entries in the address index, and the campaign
        recipient it was sent for unlinked (its status kept, its ``message_id`` cleared).
        A message is removed whole or not at all."""
        ...

    async def purge_job_log(self, before: datetime, limit: int) -> int:
        """The job queue's log rows (and per-second statistics) older than ``before``
        (Postgres: pgqueuer's; 0 where jobs leave no log)."""
        ...

    async def purge_import_files(self, limit: int) -> int:
        """Pieces of the files of finished imports (done or failed)."""
        ...

    async def purge_import_errors(self, before: datetime, limit: int) -> int:
        """Error rows of imports that finished before ``before``."""
        ...

    async def purge_action_members(self, limit: int) -> int:
        """The frozen lead ids of finished bulk actions (a row holds a batch of them)."""
        ...
