"""Everything an account holds about one person, in Postgres or SQLite: the one place that
knows every table naming an address (ports/privacy.py).

Found by the address, within the account:
- ``leads`` by ``email_key`` (its unique index);
- ``messages`` whose ``recipients`` (a JSON array of formatted addresses) hold the address
  in any case: a scan of the account's messages by its (account_id, created_at) index, the
  match made exact here (domain/privacy.DataSubject.is_mailbox);
- ``message_events`` of those messages;
- ``campaign_recipients`` of the account's campaigns whose ``email`` is the address;
- ``lead_import_errors`` of the account's imports whose ``email`` cell is the address;
- ``suppressions`` by the address's digest (its unique index).
An import's uploaded file is deleted when the import finishes (lead_imports.py), so only
an import still running holds one.

An erasure rewrites them in one transaction: all of it lands or none of it.
"""

from __future__ import annotations

from leadmail.adapters.db.database import Database
from leadmail.adapters.db.errors import refused
from leadmail.adapters.db.lead_imports import ERRORS
from leadmail.adapters.db.leads import LEADS
from leadmail.adapters.db.message_events import EVENTS, PiccoloMessageEventRepository
from leadmail.adapters.db.messages import MESSAGES
from leadmail.adapters.db.recipient_leases import RECIPIENTS
from leadmail.adapters.db.suppressions import PiccoloSuppressionRepository
from leadmail.domain.campaign_recipients import Recipient
from leadmail.domain.email import Message
from leadmail.domain.privacy import (
    DataSubject,
    Erased,
    ImportRow,
    PersonalData,
    SentMessage,
    erased_event,
    erased_message,
    erased_recipient,
    erased_row,
)
from leadmail.ports.privacy import PersonalDataRepository


def _columns(names: tuple[str, ...], table: str = "") -> str:
    prefix = f'"{table}".' if table else ""
    return ", ".join(f'{prefix}"{name}"' for name in names)


_LEAD = LEADS.select("account_id", "email_key")
_DELETE_LEAD = LEADS.statement(
    'DELETE FROM "leads" WHERE "account_id" = %s AND "email_key" = %s RETURNING "lead_id"'
)
# The address's text anywhere in the recipients, in any case (lower() folds ASCII on
# SQLite, every letter on Postgres): candidates, made exact by is_mailbox.
_MESSAGES = {
    kind: MESSAGES.statement(
        f'SELECT {_columns(MESSAGES.columns)} FROM "messages" WHERE "account_id" = %s'
        f' AND {find}(lower("recipients"), %s) > 0 ORDER BY "created_at" DESC, "message_id" DESC'
    )
    for kind, find in (("postgres", "strpos"), ("sqlite", "instr"))
}
_ERASE_MESSAGE = MESSAGES.update(
    ["recipients", "subject", "last_error"], ["account_id", "message_id"], returning=False
)
# The person's entries of the message log's address index go: nothing finds the erased
# messages by the address any more (they keep the digest in its place).
_ERASE_ADDRESSES = MESSAGES.statement(
    'DELETE FROM "message_addresses" WHERE "account_id" = %s AND "address" = %s'
)
_ERASE_EVENT = EVENTS.update(["detail"], ["provider", "event_id"], returning=False)
_RECIPIENTS = RECIPIENTS.statement(
    f'SELECT {_columns(RECIPIENTS.columns, "r")} FROM "campaign_recipients" AS "r"'
    ' JOIN "campaigns" AS "c" ON "c"."campaign_id" = "r"."campaign_id"'
    ' WHERE "c"."account_id" = %s AND lower("r"."email") = %s'
    ' ORDER BY "r"."updated_at" DESC, "r"."campaign_id" DESC'
)
_ERASE_RECIPIENT = RECIPIENTS.update(
    ["email", "error"], ["campaign_id", "lead_id"], returning=False
)
_IMPORT_ROWS = ERRORS.statement(
    'SELECT "e"."import_id", "e"."row_number", "e"."field", "e"."message", "e"."email"'
    ' FROM "lead_import_errors" AS "e"'
    ' JOIN "lead_imports" AS "i" ON "i"."import_id" = "e"."import_id"'
    ' WHERE "i"."account_id" = %s AND lower("e"."email") = %s'
    ' ORDER BY "i"."created_at" DESC, "e"."import_id", "e"."row_number"'
)
_ERASE_IMPORT_ROW = ERRORS.statement(
    'UPDATE "lead_import_errors" SET "email" = %s, "message" = %s'
    ' WHERE "import_id" = %s AND "row_number" = %s'
)


class PiccoloPersonalData(PersonalDataRepository):
    def __init__(self, database: Database) -> None:
        self._db = database
        self._events = PiccoloMessageEventRepository(database)
        self._suppressions = PiccoloSuppressionRepository(database)

    async def _messages_to(self, account_id: str, person: DataSubject) -> list[Message]:
        rows = await self._db.fetch(_MESSAGES[self._db.kind], account_id, person.address)
        found = (MESSAGES.from_row(row) for row in rows)
        return [m for m in found if any(person.is_mailbox(box) for box in m.to)]

    async def _recipients_of(self, account_id: str, person: DataSubject) -> list[Recipient]:
        rows = await self._db.fetch(_RECIPIENTS, account_id, person.address)
        return [RECIPIENTS.from_row(row) for row in rows]

    async def _rows_of(self, account_id: str, person: DataSubject) -> list[ImportRow]:
        rows = await self._db.fetch(_IMPORT_ROWS, account_id, person.address)
        return [ImportRow(row["import_id"], ERRORS.from_row(row)) for row in rows]

    async def export(self, account_id: str, person: DataSubject) -> PersonalData:
        with refused():
            lead = await self._db.fetchrow(_LEAD, account_id, person.address)
            messages = [
                SentMessage(m, tuple(await self._events.list(account_id, m.message_id)))
                for m in await self._messages_to(account_id, person)
            ]
            recipients = await self._recipients_of(account_id, person)
            import_rows = await self._rows_of(account_id, person)
        return PersonalData(
            person=person,
            lead=None if lead is None else LEADS.from_row(lead),
            messages=tuple(messages),
            recipients=tuple(recipients),
            import_rows=tuple(import_rows),
            suppression=await self._suppressions.get(account_id, person.digest),
        )

    async def erase(self, account_id: str, person: DataSubject) -> Erased:
        with refused():
            async with self._db.transaction():
                leads = await self._db.fetch(_DELETE_LEAD, account_id, person.address)
                messages = await self._messages_to(account_id, person)
                events = 0
                for message in messages:
                    erased = erased_message(message, person)
                    await self._db.execute(_ERASE_MESSAGE, *_ERASE_MESSAGE.args(erased))
                    for event in await self._events.list(account_id, message.message_id):
                        events += 1
                        scrubbed = erased_event(event, person)
                        if scrubbed != event:
                            await self._db.execute(_ERASE_EVENT, *_ERASE_EVENT.args(scrubbed))
                await self._db.execute(_ERASE_ADDRESSES, account_id, person.address)
                recipients = await self._recipients_of(account_id, person)
                for recipient in recipients:
                    erased_one = erased_recipient(recipient, person)
                    await self._db.execute(_ERASE_RECIPIENT, *_ERASE_RECIPIENT.args(erased_one))
                import_rows = await self._rows_of(account_id, person)
                for found in import_rows:
                    row = erased_row(found.row, person)
                    await self._db.execute(
                        _ERASE_IMPORT_ROW, row.email, row.message, found.import_id, row.row
                    )
                suppressions = await self._suppressions.erase(account_id, person.digest)
        return Erased(
            person=person,
            leads=len(leads),
            messages=len(messages),
            events=events,
            campaign_recipients=len(recipients),
            import_errors=len(import_rows),
            suppressions=suppressions,
        )
