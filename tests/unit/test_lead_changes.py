"""Partial updates: LeadChanges.parse and apply_to."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from leadmail.domain.errors import ValidationFailed
from leadmail.domain.leads import MAX_NAME, MAX_NOTE, MAX_SOURCE, Lead, LeadChanges

CREATED = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LATER = CREATED + timedelta(hours=2)


def a_lead() -> Lead:
    return Lead(
        lead_id="ld_original",
        account_id="acc_1",
        name="Ada Lovelace",
        email="ada@example.com",
        source="webinar",
        note="First contact.",
        phone="",
        created_at=CREATED,
        updated_at=CREATED,
    )


def test_nothing_to_change_is_refused() -> None:
    with pytest.raises(ValidationFailed) as caught:
        LeadChanges.parse()

    assert [e.field for e in caught.value.errors] == ["body"]


def test_only_given_fields_are_set() -> None:
    changes = LeadChanges.parse(note="Paid.")

    assert changes == LeadChanges(name=None, email=None, source=None, note="Paid.")


def test_given_fields_obey_the_lead_rules() -> None:
    changes = LeadChanges.parse(name="  Ada King ", email=" Ada@Example.COM", source=" ads ")

    assert (changes.name, changes.email, changes.source) == ("Ada King", "Ada@example.com", "ads")


def test_source_and_note_may_be_cleared() -> None:
    changes = LeadChanges.parse(source="", note="")

    assert (changes.source, changes.note) == ("", "")


def test_every_broken_field_is_listed() -> None:
    with pytest.raises(ValidationFailed) as caught:
        LeadChanges.parse(
            name="n" * (MAX_NAME + 1),
            email="ada@",
            source="s\n",
            note="x" * (MAX_NOTE + 1),
        )

    assert [e.field for e in caught.value.errors] == ["name", "email", "source", "note"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", ""),
        ("name", "Ada\r"),
        ("name", "\x00"),
        ("email", "no-at-sign"),
        ("email", "ada@example.com\n"),
        ("email", "ada\x00@example.com"),
        ("source", "s" * (MAX_SOURCE + 1)),
        ("source", "\x00"),
        ("note", "\x00"),
    ],
)
def test_a_single_broken_field_is_named(field: str, value: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        LeadChanges.parse(**{field: value})

    assert [e.field for e in caught.value.errors] == [field]


def test_apply_to_changes_given_fields_and_keeps_the_rest() -> None:
    lead = a_lead()

    updated = LeadChanges.parse(name="Ada King").apply_to(lead, LATER)

    assert updated.name == "Ada King"
    assert (updated.email, updated.source, updated.note) == (lead.email, lead.source, lead.note)
    assert (updated.lead_id, updated.account_id) == (lead.lead_id, lead.account_id)


def test_apply_to_moves_updated_at_but_not_created_at() -> None:
    updated = LeadChanges.parse(note="x").apply_to(a_lead(), LATER)

    assert updated.updated_at == LATER
    assert updated.created_at == CREATED


def test_apply_to_can_clear_source() -> None:
    assert LeadChanges.parse(source="").apply_to(a_lead(), LATER).source == ""


def test_apply_to_leaves_the_original_untouched() -> None:
    lead = a_lead()

    LeadChanges.parse(name="Someone Else", email="else@example.com").apply_to(lead, LATER)

    assert lead == a_lead()
