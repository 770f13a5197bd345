"""Statements and row mapping derived from a table's description (adapters/db/statements.py):
the SQL for both backends, and each table's columns matched to its domain type's fields."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from piccolo.columns import Text, Timestamptz, Varchar
from piccolo.table import Table

from leadmail.adapters.db.idempotency import CLAIMS
from leadmail.adapters.db.keys import KEYS
from leadmail.adapters.db.leads import LEADS
from leadmail.adapters.db.messages import MESSAGES
from leadmail.adapters.db.statements import Mapped
from leadmail.domain.email import Message, MessageStatus
from tests.contract.support import T0, a_claim, a_lead, a_message


class Notes(Table, tablename="notes"):
    note_id = Varchar(length=40, primary_key=True)
    body = Text()
    written_at = Timestamptz()


@dataclass(frozen=True, slots=True)
class Note:
    note_id: str
    body: str
    written_at: datetime


def test_statements_are_spelled_for_each_backend_with_arguments_in_order() -> None:
    notes = Mapped(Notes, Note)
    note = Note("n_1", "hello", T0)

    assert notes.insert.postgres == (
        'INSERT INTO "notes" ("note_id", "body", "written_at") VALUES ($1, $2, $3)'
    )
    assert notes.insert.sqlite == (
        'INSERT INTO "notes" ("note_id", "body", "written_at") VALUES ({}, {}, {})'
    )
    assert notes.insert.args(note) == ("n_1", "hello", T0)
    update = notes.update(["body"], ["note_id"], returning=True)
    assert update.postgres == (
        'UPDATE "notes" SET "body" = $1 WHERE "note_id" = $2'
        ' RETURNING "note_id", "body", "written_at"'
    )
    assert update.args(note) == ("hello", "n_1")
    assert notes.select("note_id").postgres.endswith('FROM "notes" WHERE "note_id" = $1')
    assert not notes.select("note_id").writes
    assert notes.delete("note_id").postgres == (
        'DELETE FROM "notes" WHERE "note_id" = $1 RETURNING "note_id"'
    )
    assert notes.delete("note_id").writes


def test_a_row_comes_back_as_the_domain_value_with_its_moment_in_utc() -> None:
    notes = Mapped(Notes, Note)

    # SQLite hands back text for a RETURNING clause; a driver may drop the zone.
    from_text = notes.from_row({"note_id": "n", "body": "b", "written_at": "2026-11-22 10:15:30"})
    naive = notes.from_row({"note_id": "n", "body": "b", "written_at": datetime(2026, 1, 1)})

    assert from_text.written_at == datetime(2026, 11, 22, 10, 15, 30, tzinfo=UTC)
    assert naive.written_at.tzinfo is UTC


def test_a_field_without_a_column_is_refused_when_the_mapping_is_made() -> None:
    @dataclass(frozen=True, slots=True)
    class Stray:
        note_id: str
        colour: str

    with pytest.raises(TypeError, match="colour"):
        Mapped(Notes, Stray)


def test_every_lead_field_and_its_email_key_are_stored_and_read_back() -> None:
    lead = a_lead("acc_1", email="Ada@Example.com", phone="+44 20 7946 0958")
    row = dict(zip(LEADS.columns, LEADS.insert.args(lead), strict=True))

    assert row["email_key"] == "ada@example.com"
    assert row["phone"] == "+44 20 7946 0958"
    assert LEADS.from_row(row) == lead


def test_a_message_is_stored_under_the_tables_own_names() -> None:
    message = a_message("acc_1", to=("a@example.com", '"B" <b@example.com>'))
    row = dict(zip(MESSAGES.columns, MESSAGES.insert.args(message), strict=True))

    assert json.loads(row["recipients"]) == ["a@example.com", '"B" <b@example.com>']
    assert row["status"] == "pending"
    back = MESSAGES.from_row(row)
    assert back == message
    assert isinstance(back, Message)
    assert back.status is MessageStatus.PENDING


def test_a_computed_column_is_filled_and_a_joined_field_is_read_not_written() -> None:
    claim = a_claim("acc_1", key="k")
    first, second = CLAIMS.to_dict(claim), CLAIMS.to_dict(claim)

    assert first["claim_id"].startswith("clm_")
    assert first["claim_id"] != second["claim_id"]  # a new surrogate id each time
    assert CLAIMS.from_row(first) == claim
    assert "account_name" not in KEYS.columns
    key_row = {
        "key_id": "key_1",
        "account_id": "acc_1",
        "account_name": "acme",  # from the join with accounts
        "label": "",
        "prefix": "lm_abc",
        "digest": "d" * 64,
        "created_at": T0,
        "last_used_at": None,
        "revoked_at": None,
    }
    key = KEYS.from_row(key_row)
    assert (key.account_name, key.last_used_at) == ("acme", None)
    assert "account_name" not in KEYS.to_dict(key)
