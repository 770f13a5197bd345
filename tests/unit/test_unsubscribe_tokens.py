"""The unsubscribe token: signed, verified without a lookup, refused when tampered with or
signed by another installation's key; the link and RFC 8058's headers made from it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leadmail.domain.errors import ValidationFailed
from leadmail.domain.unsubscribe import (
    MIN_KEY_BYTES,
    UnsubscribeTarget,
    UnsubscribeTokenInvalid,
    check_key,
    make_token,
    read_token,
    unsubscribe_headers,
    unsubscribe_url,
)

KEY = b"k" * 32
OTHER_KEY = b"o" * 32
URL_SAFE = set(string.ascii_letters + string.digits + "-_.")


def test_a_token_names_its_account_and_the_normalised_address() -> None:
    token = make_token(KEY, "acc_1", "Ada Lovelace <Ada@Example.COM>")

    assert read_token(KEY, token) == UnsubscribeTarget("acc_1", "ada@example.com")
    assert set(token) <= URL_SAFE
    assert make_token(KEY, "acc_1", "ada@example.com") == token  # one token per address


def test_another_account_or_address_has_another_token() -> None:
    token = make_token(KEY, "acc_1", "ada@example.com")

    assert make_token(KEY, "acc_2", "ada@example.com") != token
    assert make_token(KEY, "acc_1", "grace@example.com") != token


def test_a_token_signed_with_another_key_is_refused() -> None:
    foreign = make_token(OTHER_KEY, "acc_1", "ada@example.com")

    with pytest.raises(UnsubscribeTokenInvalid) as caught:
        read_token(KEY, foreign)
    assert caught.value.code == "UNSUBSCRIBE_TOKEN_INVALID"


def _payload(account: str, address: str) -> str:
    return base64.urlsafe_b64encode(f"{account}\n{address}".encode()).rstrip(b"=").decode()


def test_a_changed_payload_is_refused() -> None:
    token = make_token(KEY, "acc_1", "ada@example.com")
    _, _, mac = token.partition(".")

    for payload in (
        _payload("acc_2", "ada@example.com"),  # another account
        _payload("acc_1", "grace@example.com"),  # another address
        _payload("acc_1", "ada@example.com") + "A",  # one character more
        "",
    ):
        with pytest.raises(UnsubscribeTokenInvalid):
            read_token(KEY, f"{payload}.{mac}")


def test_a_changed_signature_is_refused() -> None:
    token = make_token(KEY, "acc_1", "ada@example.com")
    payload, _, mac = token.partition(".")
    flipped = ("B" if mac[0] == "A" else "A") + mac[1:]

    for bad in (f"{payload}.{flipped}", f"{payload}.{mac[:-1]}", f"{payload}.", payload, ""):
        with pytest.raises(UnsubscribeTokenInvalid):
            read_token(KEY, bad)


def test_texts_that_are_no_token_are_refused() -> None:
    token = make_token(KEY, "acc_1", "ada@example.com")

    for bad in ("x" * 5000, token + "é", "é." + token, "..", token.replace(".", "")):
        with pytest.raises(UnsubscribeTokenInvalid):
            read_token(KEY, bad)


def test_a_signed_payload_not_of_a_tokens_form_is_refused() -> None:
    # Only make_token's forms are read: a signature over anything else (here made with the
    # key itself, as no client can) still does not name an address.
    for raw in ("acc_1 ada@example.com", "\nada@example.com", "acc_1\nAda@Example.com"):
        payload = base64.urlsafe_b64encode(raw.encode()).rstrip(b"=").decode()
        digest = hmac.new(
            KEY, b"leadmail-unsubscribe:v1:" + payload.encode(), hashlib.sha256
        ).digest()
        mac = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        with pytest.raises(UnsubscribeTokenInvalid):
            read_token(KEY, f"{payload}.{mac}")


def test_an_address_that_is_none_cannot_have_a_token() -> None:
    with pytest.raises(ValidationFailed):
        make_token(KEY, "acc_1", "not an address")


def test_a_short_key_is_refused() -> None:
    assert check_key(b"x" * MIN_KEY_BYTES) == b"x" * MIN_KEY_BYTES
    with pytest.raises(ValueError, match="at least 32 bytes"):
        check_key(b"x" * (MIN_KEY_BYTES - 1))


def test_the_url_and_the_rfc_8058_headers() -> None:
    url = unsubscribe_url("https://mail.school.example/", "abc.def")

    assert url == "https://mail.school.example/u/abc.def"
    assert unsubscribe_headers(url) == (
        ("List-Unsubscribe", "<https://mail.school.example/u/abc.def>"),
        ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
    )


accounts = st.text(alphabet=string.ascii_letters + string.digits + "_-.", min_size=1, max_size=40)
locals_ = st.text(alphabet=string.ascii_lowercase + string.digits + "._+", min_size=1, max_size=30)


@given(account=accounts, local=locals_, key=st.binary(min_size=32, max_size=64))
def test_every_token_reads_back(account: str, local: str, key: bytes) -> None:
    local = local.strip(".").replace("..", ".") or "a"
    address = f"{local}@example.com"

    token = make_token(key, account, address)

    assert read_token(key, token) == UnsubscribeTarget(account, address)
    assert set(token) <= URL_SAFE


@given(position=st.integers(min_value=0), char=st.sampled_from("AbZ09-_."))
def test_any_one_character_changed_is_refused(position: int, char: str) -> None:
    token = make_token(KEY, "acc_1", "ada@example.com")
    at = position % len(token)
    changed = token[:at] + char + token[at + 1 :]
    if changed == token:
        return
    # The signature covers the payload's text, not its decoded bytes: even a change that
    # base64 would decode to the same bytes is refused.
    with pytest.raises(UnsubscribeTokenInvalid):
        read_token(KEY, changed)
