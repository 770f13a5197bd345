"""Lead imports: a CSV file of leads brought into an account in the background, its
progress, the rows it could not take, and how an imported row meets a lead already there."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from leadmail.domain.addresses import MAX_EMAIL_LENGTH, InvalidAddress, normalise_email
from leadmail.domain.custom_fields import MAX_FIELDS, MAX_FIELDS_BYTES, encode_fields
from leadmail.domain.errors import DomainError
from leadmail.domain.ids import id_rule, new_id
from leadmail.domain.leads import Lead
from leadmail.domain.tags import MAX_TAGS, Tags, tags_of

IMPORT_ID_PREFIX = "imp_"
IMPORT_ID = id_rule(IMPORT_ID_PREFIX)
MAX_IMPORT_BYTES = 50 * 1024 * 1024  # the default of LEADMAIL_IMPORT_MAX_BYTES
BATCH_ROWS = 1_000  # rows written (and progress committed) together
# Runs of one import that may end with no batch written (the process stopped or died
# each time, by a deploy, a crash or an operator) before it is failed instead of run again.
MAX_ATTEMPTS = 3
GAVE_UP = (
    f"stopped after {MAX_ATTEMPTS} runs in a row ended without a batch written (the server"
    " stopped or died each time); the rows counted were written"
)
# The text columns a file may give; a column the file has not is left as it is on update.
TEXT_COLUMNS = ("name", "source", "note", "phone")


def new_import_id() -> str:
    return new_id(IMPORT_ID_PREFIX)


class ImportMode(enum.StrEnum):
    UPSERT = "upsert"  # an existing email is updated
    CREATE = "create"  # an existing email is reported, not touched


class ImportStatus(enum.StrEnum):
    RECEIVING = "receiving"  # the upload is being stored; the import has no client yet
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"

    @property
    def finished(self) -> bool:
        return self in (ImportStatus.DONE, ImportStatus.FAILED)


class ImportNotFound(DomainError):
    """No import with that id in the caller's account (another account's included)."""

    code = "IMPORT_NOT_FOUND"

    def __init__(self, import_id: str) -> None:
        super().__init__(f"Import {import_id!r} was not found")
        self.import_id = import_id


@dataclass(frozen=True, slots=True)
class LeadImport:
    """One import. ``rows`` counts the file's data rows processed so far (the position a
    resumed import starts from); ``total`` is the number of data rows, once counted."""

    import_id: str
    account_id: str
    mode: ImportMode
    tags: Tags  # added to every imported lead
    status: ImportStatus
    created_at: datetime
    updated_at: datetime
    size: int = 0  # bytes of the file
    total: int | None = None
    rows: int = 0
    created: int = 0
    updated: int = 0
    skipped: int = 0
    failed: int = 0
    started_at: datetime | None = None  # its first start (a resumed import keeps it)
    finished_at: datetime | None = None
    error: str = ""  # why a failed import stopped
    runner: str = ""  # who runs it now: a batch of anyone else is refused
    attempts: int = 0  # runners that took it since its last batch was written

    def eta_seconds(self, now: datetime) -> int | None:
        """Seconds left at the pace so far, while running with rows done."""
        if self.status is not ImportStatus.RUNNING or self.started_at is None:
            return None
        if not self.rows or self.total is None:
            return None
        elapsed = (now - self.started_at).total_seconds()
        return max(0, round(elapsed / self.rows * (self.total - self.rows)))


@dataclass(frozen=True, slots=True)
class RowError:
    """A row of the file not imported, and why. ``row`` as a spreadsheet shows it: the
    header is row 1."""

    row: int
    field: str
    message: str
    # The row's email cell: its address as leads keep it (domain lower-cased) when it is
    # one, else as the file wrote it (trimmed, at most MAX_EMAIL_LENGTH characters; ""
    # when it has none). Which person the row was, for an export or an erasure (GDPR) and
    # for a school reading the errors; a one-way digest once erased.
    email: str = ""


def row_email(cell: str) -> str:
    """What an error row keeps of a row's email cell (RowError.email)."""
    text = cell.strip()
    try:
        return normalise_email(text)
    except InvalidAddress:
        return text[:MAX_EMAIL_LENGTH]


@dataclass(frozen=True, slots=True)
class ImportedRow:
    row: int
    lead: Lead  # as a new lead would be (a new id, stamped now)


@dataclass(frozen=True, slots=True)
class ImportBatch:
    """Up to BATCH_ROWS consecutive rows of the file, written together with the progress
    they make: all of it or none of it lands. Refused (nothing written) unless the import
    is still ``runner``'s and at ``start``."""

    import_id: str
    account_id: str
    runner: str
    mode: ImportMode
    columns: frozenset[str]  # the TEXT_COLUMNS the file has
    start: int  # rows done before this batch
    end: int  # rows done after it
    leads: Sequence[ImportedRow]  # at most one per email
    failed: Sequence[RowError]  # rows that broke a rule
    skipped: Sequence[RowError]  # rows a later row of the same email replaces
    now: datetime


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    created: int = 0
    updated: int = 0
    skipped: int = 0
    failed: int = 0
    errors: list[RowError] = field(default_factory=list)  # found while writing


EXISTS = "a lead with this email already exists (mode create: left as it is)"
TOO_MANY_TAGS = f"would give the lead more than {MAX_TAGS} tags"
TOO_MANY_FIELDS = f"would give the lead more than {MAX_FIELDS} fields"
FIELDS_TOO_LARGE = f"would make the lead's fields more than {MAX_FIELDS_BYTES} bytes as JSON"


def merged(existing: Lead, incoming: Lead, columns: frozenset[str]) -> Lead | RowError:
    """An imported row over the lead already stored with its email (mode upsert): the
    email as the file writes it, the file's text columns, tags added, custom fields merged
    key by key. A RowError (row 0: the caller knows it) when the result passes a limit."""
    tags: Tags = tags_of((*existing.tags, *incoming.tags))
    if len(tags) > MAX_TAGS:
        return RowError(0, "tags", TOO_MANY_TAGS)
    fields = {**existing.fields, **incoming.fields}
    if len(fields) > MAX_FIELDS:
        return RowError(0, "fields", TOO_MANY_FIELDS)
    if len(encode_fields(fields).encode()) > MAX_FIELDS_BYTES:
        return RowError(0, "fields", FIELDS_TOO_LARGE)
    texts = {name: getattr(incoming, name) for name in TEXT_COLUMNS if name in columns}
    return replace(
        existing,
        email=incoming.email,
        tags=tags,
        fields=fields,
        updated_at=incoming.updated_at,
        **texts,
    )


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """What a batch writes, given the leads already stored with its emails."""

    new: list[Lead]
    changed: list[Lead]
    outcome: BatchOutcome


def plan(batch: ImportBatch, existing: dict[str, Lead]) -> BatchPlan:
    """``existing``: the account's stored leads of the batch's email keys, by key. (The
    stores that write a batch in one SQL statement do the same there.)"""
    new: list[Lead] = []
    changed: list[Lead] = []
    errors = [*batch.failed, *batch.skipped]
    skipped = len(batch.skipped)
    failed = len(batch.failed)
    for imported in batch.leads:
        stored = existing.get(imported.lead.email_key)
        if stored is None:
            new.append(imported.lead)
        elif batch.mode is ImportMode.CREATE:
            skipped += 1
            errors.append(RowError(imported.row, "email", EXISTS, imported.lead.email))
        else:
            result = merged(stored, imported.lead, batch.columns)
            if isinstance(result, RowError):
                failed += 1
                errors.append(replace(result, row=imported.row, email=imported.lead.email))
            else:
                changed.append(result)
    errors.sort(key=lambda error: error.row)
    outcome = BatchOutcome(len(new), len(changed), skipped, failed, errors)
    return BatchPlan(new, changed, outcome)
