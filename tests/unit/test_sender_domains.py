"""A sender domain as the CLI takes it (domain/sender_domains.py): a host name, lower-cased,
in the form a sender's address gives its domain."""

from __future__ import annotations

import re

import pytest

from leadmail.domain.email import Mailbox
from leadmail.domain.sender_domains import MAX_DOMAIN, NOT_A_HOST, check_domain


@pytest.mark.parametrize(
    ("raw", "domain"),
    [
        ("school.example.com", "school.example.com"),
        ("  School.Example.COM ", "school.example.com"),
        ("mail-1.a.b.example.org", "mail-1.a.b.example.org"),
        ("bücher.de", "bücher.de"),
        ("xn--bcher-kva.de", "bücher.de"),  # one domain, however it is spelled
    ],
)
def test_a_host_name_is_taken_lower_cased(raw: str, domain: str) -> None:
    assert check_domain(raw) == domain


@pytest.mark.parametrize(
    "raw", ["School.Example.com", "xn--bcher-kva.de", "BÜCHER.de", "a-b.Example.org"]
)
def test_it_is_what_a_senders_address_gives_as_its_domain(raw: str) -> None:
    # SenderRules compares the two as text: they must be spelled alike.
    assert check_domain(raw) == Mailbox.parse(f"Office <hello@{raw}>").domain


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("", "is required"),
        ("   ", "is required"),
        ("hello@school.example", "the part after the @"),
        ("@school.example", "the part after the @"),
        ("school example.com", NOT_A_HOST),
        ("school.example.com/path", NOT_A_HOST),
        ("https://school.example.com", NOT_A_HOST),
        ("[192.0.2.1]", NOT_A_HOST),
        ("localhost", "should have a period"),
        ("school..example.com", "two periods in a row"),
        ("-school.example.com", NOT_A_HOST),
        ("school.example.com.", "end with a period"),
        ("sch_ool.example.com", "invalid characters"),
        ("mail.test", "special-use or reserved"),
        ("a" * 64 + ".example.com", NOT_A_HOST),
        ("a." * 127 + "com", f"at most {MAX_DOMAIN} characters"),
    ],
)
def test_what_is_not_a_host_name_is_refused_saying_why(raw: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)) as caught:
        check_domain(raw)

    assert "@-sign" not in str(caught.value)
    assert "email address" not in str(caught.value)
