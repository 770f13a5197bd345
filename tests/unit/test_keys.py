"""API key rules: minting, shape checks, digests, account names and labels."""

from __future__ import annotations

import base64
import hashlib

import pytest

from leadmail.domain.keys import (
    DISPLAY_PREFIX_LENGTH,
    KEY_PREFIX,
    MAX_LABEL,
    check_account_name,
    check_label,
    digest_of,
    digests_match,
    looks_like_key,
    mint_key,
    new_account_id,
    new_key_id,
)


def test_minted_key_has_the_prefix_and_32_random_bytes() -> None:
    key = mint_key()

    assert key.secret.startswith(KEY_PREFIX)
    body = key.secret.removeprefix(KEY_PREFIX)
    assert len(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))) >= 32


def test_digest_is_the_sha256_hex_of_the_secret() -> None:
    key = mint_key()

    assert key.digest == hashlib.sha256(key.secret.encode()).hexdigest()
    assert key.digest == digest_of(key.secret)
    assert key.secret not in key.digest


def test_display_prefix_is_the_start_of_the_secret_and_no_more() -> None:
    key = mint_key()

    assert key.prefix == key.secret[:DISPLAY_PREFIX_LENGTH]
    assert key.prefix.startswith(KEY_PREFIX)
    assert len(key.prefix) == len(KEY_PREFIX) + 8
    assert len(key.prefix) < len(key.secret) // 2


def test_minted_keys_are_unique() -> None:
    keys = [mint_key() for _ in range(500)]

    assert len({k.secret for k in keys}) == 500
    assert len({k.digest for k in keys}) == 500


def test_minted_keys_look_like_keys() -> None:
    assert all(looks_like_key(mint_key().secret) for _ in range(200))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "lm_",
        "lm_short",
        "LM_" + "a" * 43,
        "xx_" + "a" * 43,
        "lm_" + "a" * 42,
        "lm_" + "a" * 44,
        "lm_" + "a" * 42 + "=",
        "lm_" + "a" * 42 + "+",
        "lm_" + "a" * 42 + "/",
        "lm_" + "a" * 42 + " ",
        " lm_" + "a" * 43,
        "lm_" + "a" * 43 + "\n",
        "Bearer lm_" + "a" * 43,
        "lm_" + "é" * 43,
    ],
)
def test_garbage_does_not_look_like_a_key(text: str) -> None:
    assert not looks_like_key(text)


def test_a_well_shaped_key_looks_like_a_key() -> None:
    assert looks_like_key("lm_" + "aZ09_-" * 7 + "x")


def test_digests_match_only_when_equal() -> None:
    digest = digest_of("lm_one")

    assert digests_match(digest, digest_of("lm_one"))
    assert not digests_match(digest, digest_of("lm_two"))
    assert not digests_match(digest, digest[:-1])
    assert not digests_match(digest, "")


def test_digests_match_works_with_non_ascii_input() -> None:
    # hmac.compare_digest refuses non-ASCII str; the helper must not.
    assert not digests_match(digest_of("lm_one"), "é" * 64)


def test_account_and_key_ids_are_prefixed_and_unique() -> None:
    accounts = {new_account_id() for _ in range(500)}
    keys = {new_key_id() for _ in range(500)}

    assert len(accounts) == 500
    assert len(keys) == 500
    assert all(a.startswith("acc_") for a in accounts)
    assert all(k.startswith("key_") for k in keys)


@pytest.mark.parametrize("name", ["a", "acme", "Acme-Courses_2026", "9lives", "a.b", "x" * 64])
def test_good_account_names_are_kept(name: str) -> None:
    assert check_account_name(name) == name


@pytest.mark.parametrize(
    "name",
    ["", "-acme", ".acme", "_acme", "ac me", "acme!", "acme/evil", "x" * 65, "acme\n", "ácme"],
)
def test_bad_account_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="account name"):
        check_account_name(name)


@pytest.mark.parametrize(
    ("label", "kept"), [("", ""), ("ci", "ci"), ("  laptop  ", "laptop"), ("l" * 200, "l" * 200)]
)
def test_good_labels_are_trimmed(label: str, kept: str) -> None:
    assert check_label(label) == kept


@pytest.mark.parametrize("label", ["a\nb", "a\rb", "a\x00b", "l" * (MAX_LABEL + 1)])
def test_bad_labels_are_refused(label: str) -> None:
    with pytest.raises(ValueError, match="label"):
        check_label(label)
