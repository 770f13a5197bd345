"""The rules every lead obeys: LeadFields.parse and email normalisation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leadmail.domain.addresses import InvalidAddress, email_key, normalise_email
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.leads import MAX_NAME, MAX_NOTE, MAX_SOURCE, LeadFields

# 64 + 1 + 189 = 254 characters: the longest address the service accepts.
LONGEST_EMAIL = "a" * 64 + "@" + "b" * 63 + "." + "c" * 63 + "." + "d" * 57 + ".com"


def failed_fields(error: ValidationFailed) -> list[str]:
    return [e.field for e in error.errors]


def parse_error(**fields: str) -> ValidationFailed:
    values = {"name": "Ada", "email": "ada@example.com", **fields}
    with pytest.raises(ValidationFailed) as caught:
        LeadFields.parse(**values)
    return caught.value


def test_minimal_lead_gets_empty_source_and_note() -> None:
    fields = LeadFields.parse(name="Ada Lovelace", email="ada@example.com")

    assert fields == LeadFields(name="Ada Lovelace", email="ada@example.com", source="", note="")


def test_all_fields_are_kept() -> None:
    fields = LeadFields.parse(
        name="Ada", email="ada@example.com", source="webinar", note="Asked about pricing."
    )

    assert (fields.source, fields.note) == ("webinar", "Asked about pricing.")


# --- name ---------------------------------------------------------------------------


def test_name_is_trimmed() -> None:
    assert LeadFields.parse(name="  Ada Lovelace \t", email="ada@example.com").name == (
        "Ada Lovelace"
    )


@pytest.mark.parametrize("name", ["", " ", "\t  \t"])
def test_blank_name_is_refused(name: str) -> None:
    assert failed_fields(parse_error(name=name)) == ["name"]


def test_name_of_one_character_is_enough() -> None:
    assert LeadFields.parse(name="A", email="ada@example.com").name == "A"


def test_name_may_be_200_characters() -> None:
    assert LeadFields.parse(name="n" * MAX_NAME, email="ada@example.com").name == "n" * MAX_NAME


def test_name_of_201_characters_is_refused() -> None:
    error = parse_error(name="n" * (MAX_NAME + 1))

    assert failed_fields(error) == ["name"]
    assert "200" in error.errors[0].message


def test_name_length_is_counted_after_trimming() -> None:
    name = "  " + "n" * MAX_NAME + "  "

    assert LeadFields.parse(name=name, email="ada@example.com").name == "n" * MAX_NAME


def test_name_length_counts_characters_not_bytes() -> None:
    name = "é" * MAX_NAME  # 400 bytes of UTF-8, 200 characters

    assert LeadFields.parse(name=name, email="ada@example.com").name == name


@pytest.mark.parametrize("name", ["Ada\nLovelace", "Ada\rLovelace", "Ada\r\n", "\nAda"])
def test_line_break_in_name_is_refused(name: str) -> None:
    error = parse_error(name=name)

    assert failed_fields(error) == ["name"]
    assert "line break" in error.errors[0].message


# --- email --------------------------------------------------------------------------


def test_email_is_trimmed_and_its_domain_lower_cased_but_not_its_local_part() -> None:
    fields = LeadFields.parse(name="Ada", email="  Ada.Lovelace@Example.COM  ")

    assert fields.email == "Ada.Lovelace@example.com"


@pytest.mark.parametrize("email", ["", "   "])
def test_missing_email_is_refused(email: str) -> None:
    assert failed_fields(parse_error(email=email)) == ["email"]


@pytest.mark.parametrize(
    "email",
    [
        "ada",
        "ada@",
        "@example.com",
        "ada@@example.com",
        "ada example@example.com",
        "ada@exa mple.com",
        "ada@example..com",
        ".ada@example.com",
        "ada@-example.com",
        "<ada@example.com>",
        "Ada <ada@example.com>",
        "ada@example.com, bob@example.com",
    ],
)
def test_invalid_email_syntax_is_refused(email: str) -> None:
    error = parse_error(email=email)

    assert failed_fields(error) == ["email"]


def test_email_domain_is_not_looked_up() -> None:
    # A syntactically fine domain that cannot exist: accepted, because nothing asks DNS.
    fields = LeadFields.parse(name="Ada", email="ada@no-such-domain-3f9a2c.example")

    assert fields.email == "ada@no-such-domain-3f9a2c.example"


def test_email_of_254_characters_is_accepted() -> None:
    assert len(LONGEST_EMAIL) == 254

    assert LeadFields.parse(name="Ada", email=LONGEST_EMAIL).email == LONGEST_EMAIL


def test_email_of_255_characters_is_refused() -> None:
    # Every part is within its own limit; only the whole is one character too long.
    email = "a" * 64 + "@" + "b" * 63 + "." + "c" * 63 + "." + "d" * 58 + ".com"
    assert len(email) == 255

    error = parse_error(email=email)

    assert failed_fields(error) == ["email"]
    assert "254" in error.errors[0].message


def test_email_length_is_counted_after_trimming() -> None:
    assert LeadFields.parse(name="Ada", email=f"  {LONGEST_EMAIL}  ").email == LONGEST_EMAIL


@pytest.mark.parametrize(
    "email",
    ["ada@example.com\n", "ada@example.com\r", "ada@example.com\r\nBcc: eve@example.com"],
)
def test_line_break_in_email_is_refused(email: str) -> None:
    error = parse_error(email=email)

    assert failed_fields(error) == ["email"]
    assert "line break" in error.errors[0].message


def test_internationalised_domain_is_kept_and_lower_cased() -> None:
    assert normalise_email("Jürgen@MÜNCHEN.de") == "Jürgen@münchen.de"


def test_normalise_email_explains_what_is_wrong() -> None:
    with pytest.raises(InvalidAddress, match="not a valid email address"):
        normalise_email("ada@")


def test_email_key_ignores_case_everywhere() -> None:
    assert email_key(normalise_email("Ada@Example.com")) == email_key(
        normalise_email("ADA@example.COM")
    )
    assert email_key("Ada@example.com") == "ada@example.com"


@given(
    local=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,20}[A-Za-z0-9]", fullmatch=True).filter(
        lambda s: ".." not in s
    ),
    domain=st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,10}\.[A-Za-z]{2,6}", fullmatch=True),
    padding=st.sampled_from(["", " ", "\t", "  "]),
)
def test_normalised_email_keeps_local_part_and_lowers_domain(
    local: str, domain: str, padding: str
) -> None:
    normalised = normalise_email(f"{padding}{local}@{domain}{padding}")

    assert normalised == f"{local}@{domain.lower()}"
    assert normalise_email(normalised) == normalised  # idempotent


# --- source and note ----------------------------------------------------------------


def test_source_is_trimmed() -> None:
    assert LeadFields.parse(name="Ada", email="ada@example.com", source=" webinar ").source == (
        "webinar"
    )


def test_source_may_be_100_characters() -> None:
    source = "s" * MAX_SOURCE

    assert LeadFields.parse(name="Ada", email="ada@example.com", source=source).source == source


def test_source_of_101_characters_is_refused() -> None:
    assert failed_fields(parse_error(source="s" * (MAX_SOURCE + 1))) == ["source"]


@pytest.mark.parametrize("source", ["web\nsite", "web\rsite"])
def test_line_break_in_source_is_refused(source: str) -> None:
    assert failed_fields(parse_error(source=source)) == ["source"]


def test_note_may_span_lines_and_is_kept_verbatim() -> None:
    note = "  Called twice.\r\nWants the\tevening cohort.\n  "

    assert LeadFields.parse(name="Ada", email="ada@example.com", note=note).note == note


def test_note_may_be_10000_characters() -> None:
    note = "x" * MAX_NOTE

    assert LeadFields.parse(name="Ada", email="ada@example.com", note=note).note == note


def test_note_of_10001_characters_is_refused() -> None:
    assert failed_fields(parse_error(note="x" * (MAX_NOTE + 1))) == ["note"]


# --- NUL and several errors at once -------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "Ada\x00"),
        ("email", "ada\x00@example.com"),
        ("email", "ada@example.com\x00"),
        ("source", "web\x00"),
        ("note", "hello\x00world"),
    ],
)
def test_nul_is_refused_in_every_field(field: str, value: str) -> None:
    error = parse_error(**{field: value})

    assert failed_fields(error) == [field]


def test_every_broken_field_is_listed() -> None:
    with pytest.raises(ValidationFailed) as caught:
        LeadFields.parse(
            name=" ",
            email="not-an-email",
            source="s" * (MAX_SOURCE + 1),
            note="x" * (MAX_NOTE + 1),
        )

    assert failed_fields(caught.value) == ["name", "email", "source", "note"]
    assert all(e.message for e in caught.value.errors)
    assert caught.value.code == "VALIDATION_FAILED"


def test_only_broken_fields_are_listed() -> None:
    with pytest.raises(ValidationFailed) as caught:
        LeadFields.parse(name="Ada\n", email="ada@example.com", source="ok", note="\x00")

    assert failed_fields(caught.value) == ["name", "note"]


def test_validation_message_names_the_fields() -> None:
    error = parse_error(name="", email="nope")

    assert "`name`" in error.message
    assert "`email`" in error.message
