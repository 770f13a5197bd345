"""The plain-ASCII fast path of normalise_email against email-validator itself.

The fast path may only say "valid, and this is the normal form" where email-validator says
the same; everything else it must hand over. These tests compare the two on the inputs
most likely to tell them apart: generated addresses near the edges of the grammar and the
named special cases.
"""

from __future__ import annotations

import pytest
from email_validator import EmailNotValidError, validate_email
from hypothesis import example, given, settings
from hypothesis import strategies as st

from leadmail.domain import addresses
from leadmail.domain.addresses import InvalidAddress, normalise_email


def library_form(text: str) -> str | None:
    """What normalise_email returned before the fast path: email-validator alone."""
    try:
        checked = validate_email(text, check_deliverability=False)
    except EmailNotValidError:
        return None
    return f"{checked.local_part}@{checked.domain.lower()}"


def ours(text: str) -> str | None:
    try:
        return normalise_email(text)
    except InvalidAddress:
        return None


def assert_agrees(text: str) -> None:
    fast = addresses._plain(text)
    if fast is not None:
        assert library_form(text) == fast, text
    if text == text.strip() and "\r" not in text and "\n" not in text and len(text) <= 254:
        assert ours(text) == library_form(text), text


# Characters that matter to the grammar, weighted towards the tricky ones.
_EDGY = "aZ09.-_+@!#'`{}~xn" + "-" * 4 + "." * 4


@settings(max_examples=600)
@given(st.text(alphabet=_EDGY, min_size=1, max_size=30))
@example("a@b.c")
@example("a@b.c1")
@example("a@1.2")
@example("a..b@example.com")
@example(".a@example.com")
@example("a.@example.com")
@example("a@-b.com")
@example("a@b-.com")
@example("a@ab--cd.com")
@example("a@xn--bcher-kva.ch")
@example("a@example..com")
@example("a@.example.com")
@example("a@example.com.")
def test_fast_path_agrees_with_email_validator_on_edgy_text(text: str) -> None:
    assert_agrees(text)


@settings(max_examples=300)
@given(st.emails())
def test_fast_path_agrees_with_email_validator_on_generated_addresses(text: str) -> None:
    assert_agrees(text)


@given(
    local=st.from_regex(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,70}", fullmatch=True),
    labels=st.lists(
        st.from_regex(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,64}[A-Za-z0-9])?", fullmatch=True),
        min_size=1,
        max_size=5,
    ),
    tld=st.from_regex(r"[A-Za-z0-9-]{0,6}[A-Za-z]", fullmatch=True),
)
def test_fast_path_agrees_on_long_labels_and_local_parts(
    local: str, labels: list[str], tld: str
) -> None:
    assert_agrees(f"{local}@{'.'.join([*labels, tld])}")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ada.Lovelace+leads@Example.COM", "Ada.Lovelace+leads@example.com"),
        ("o'brien@mail.example.ie", "o'brien@mail.example.ie"),
        ("x@a-b.co", "x@a-b.co"),
    ],
)
def test_plain_addresses_take_the_fast_path(text: str, expected: str) -> None:
    assert addresses._plain(text) == expected
    assert library_form(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Postmaster@example.com",  # RFC 2142 names are lower-cased by email-validator
        "ada@school.test",  # special-use domains are refused by email-validator
        "ada@localhost",
        "ada@host.local",
        "ada@xn--mnchen-3ya.de",  # punycode is decoded by email-validator
        "ada@example.c0m1",  # a top-level domain must end with a letter
        "Jürgen@münchen.de",  # not ASCII
        "Ada <ada@example.com>",  # display names are refused by email-validator
        "a" * 65 + "@example.com",  # over the local part's limit: left to email-validator
    ],
)
def test_everything_else_is_left_to_email_validator(text: str) -> None:
    assert addresses._plain(text) is None
    assert ours(text) == library_form(text)


def test_a_special_use_domain_added_at_run_time_is_honoured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import email_validator

    monkeypatch.setattr(
        email_validator,
        "SPECIAL_USE_DOMAIN_NAMES",
        [*email_validator.SPECIAL_USE_DOMAIN_NAMES, "corp"],
    )

    assert addresses._plain("ada@intranet.corp") is None
    with pytest.raises(InvalidAddress, match="special-use"):
        normalise_email("ada@intranet.corp")
