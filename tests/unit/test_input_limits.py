"""Sizes a request may not pass (an html part, a send's variables) and an address given
twice in `to`, as the domain decides them."""

from __future__ import annotations

import pytest

from leadmail.domain.email import MAX_HTML_BYTES, check_html, parse_recipients
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.templates import MAX_VARIABLES_BYTES, check_variables_size


def test_html_up_to_512_kb_in_utf8() -> None:
    assert MAX_HTML_BYTES == 512 * 1024
    check_html("x" * MAX_HTML_BYTES)
    with pytest.raises(ValidationFailed) as refused:
        check_html("x" * (MAX_HTML_BYTES + 1))
    assert refused.value.errors[0].field == "html"
    assert "larger than 512 KB" in refused.value.errors[0].message
    # Counted in bytes: 'é' is two.
    with pytest.raises(ValidationFailed):
        check_html("é" * (MAX_HTML_BYTES // 2 + 1), "text")


def test_variables_up_to_64_kb_of_names_and_values() -> None:
    assert MAX_VARIABLES_BYTES == 64 * 1024
    check_variables_size({"a": "x" * (MAX_VARIABLES_BYTES - 1)})
    with pytest.raises(ValidationFailed) as refused:
        check_variables_size({"ab": "x" * (MAX_VARIABLES_BYTES - 1)})
    assert refused.value.errors[0].field == "variables"
    assert "larger than 64 KB" in refused.value.errors[0].message
    with pytest.raises(ValidationFailed):
        check_variables_size({f"v{n}": "ü" * 400 for n in range(100)})  # 80,000+ bytes
    check_variables_size({f"v{n}": "u" * 400 for n in range(100)})  # 40,000+ bytes


def test_an_address_given_twice_is_kept_once_as_first_given() -> None:
    boxes = parse_recipients(
        ["Ada <ada@example.com>", "ada@example.com", "ADA@Example.COM", "grace@example.com"]
    )

    assert [(b.name, b.address) for b in boxes] == [
        ("Ada", "ada@example.com"),
        ("", "grace@example.com"),
    ]


def test_a_single_address_is_as_given() -> None:
    assert [b.address for b in parse_recipients("Ada@Example.com")] == ["Ada@example.com"]
