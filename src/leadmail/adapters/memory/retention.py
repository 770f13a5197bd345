"""Retention across the memory stores: each batch reads and removes in place (one event
loop: no other task runs in between, so a batch is whole here too)."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from leadmail.adapters.memory.campaigns import MemoryRecipientRepository
from leadmail.adapters.memory.idempotency import MemoryIdempotencyStore
from leadmail.adapters.memory.lead_actions import MemoryLeadActionRepository
from leadmail.adapters.memory.lead_imports import MemoryLeadImportRepository
from leadmail.adapters.memory.message_events import MemoryMessageEventRepository
from leadmail.adapters.memory.messages import MemoryMessageRepository
from leadmail.domain.retention import MessageBatch
from leadmail.ports.retention import RetentionStore


class MemoryRetentionStore(RetentionStore):
    def __init__(
        self,
        claims: MemoryIdempotencyStore,
        messages: MemoryMessageRepository,
        events: MemoryMessageEventRepository,
        recipients: MemoryRecipientRepository,
        imports: MemoryLeadImportRepository,
        actions: MemoryLeadActionRepository,
    ) -> None:
        self._claims = claims
        self._messages = messages
        self._events = events
        self._recipients = recipients
        self._imports = imports
        self._actions = actions

    async def purge_claims(self, before: datetime, limit: int) -> int:
        claims = self._claims._claims
        old = [key for key, claim in claims.items() if claim.created_at < before][:limit]
        for key in old:
            del claims[key]
        return len(old)

    async def accounts_with_messages(self, before: datetime) -> list[str]:
        records = self._messages._records.values()
        return sorted({m.account_id for m in records if m.created_at < before})

    async def purge_messages(self, account_id: str, before: datetime, limit: int) -> MessageBatch:
        records = self._messages._records
        old = sorted(
            (m for m in records.values() if m.account_id == account_id and m.created_at < before),
            key=lambda m: (m.created_at, m.message_id),
        )[:limit]
        gone = {m.message_id for m in old}
        events = self._events._events
        doomed = [key for key, event in events.items() if event.message_id in gone]
        for key in doomed:
            del events[key]
        unlinked = 0
        for by_lead in self._recipients._rows.values():
            for lead_id, recipient in by_lead.items():
                if recipient.message_id in gone:
                    by_lead[lead_id] = dataclasses.replace(recipient, message_id=None)
                    unlinked += 1
        for message_id in gone:
            del records[message_id]
        return MessageBatch(messages=len(gone), events=len(doomed), unlinked=unlinked)

    async def purge_job_log(self, before: datetime, limit: int) -> int:
        return 0  # jobs in process leave no log

    async def purge_import_files(self, limit: int) -> int:
        imports, chunks = self._imports._imports, self._imports._chunks
        removed = 0
        for import_id in list(chunks):
            found = imports.get(import_id)
            if found is None or not found.status.finished:
                continue
            pieces = chunks[import_id]
            for number in sorted(pieces)[: limit - removed]:
                del pieces[number]
                removed += 1
            if not pieces:
                del chunks[import_id]
            if removed == limit:
                break
        return removed

    async def purge_import_errors(self, before: datetime, limit: int) -> int:
        imports, errors = self._imports._imports, self._imports._errors
        removed = 0
        for import_id in list(errors):
            found = imports.get(import_id)
            if found is None or found.finished_at is None or found.finished_at >= before:
                continue
            rows = errors[import_id]
            taken = min(len(rows), limit - removed)
            del rows[:taken]
            removed += taken
            if removed == limit:
                break
        return removed

    async def purge_action_members(self, limit: int) -> int:
        actions, frozen = self._actions._actions, self._actions._frozen
        batch = self._actions._batch
        removed = 0
        for action_id in list(frozen):
            found = actions.get(action_id)
            if found is None or not found.status.finished:
                continue
            # A row of the stores' holds `batch` ids: count rows as they would.
            rows = -(-len(frozen[action_id]) // batch)
            if removed + rows > limit and removed:
                break
            del frozen[action_id]
            removed += rows
        return removed
