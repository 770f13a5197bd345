"""The provider registry, and the settings rules read from it."""

from __future__ import annotations

from typing import get_args

import pytest

from leadmail.adapters.mail.providers import (
    CONSOLE,
    DIALECTS,
    PROVIDER_NAMES,
    ProviderName,
    dialect_for,
    is_provider_name,
)
from leadmail.config import ConfigError, Settings
from tests.support import standin

NEEDS_KEY = [name for name, dialect in DIALECTS.items() if dialect.needs_api_key]
NEEDS_DOMAIN = [name for name, dialect in DIALECTS.items() if dialect.needs_domain]


def test_the_settings_type_names_exactly_the_registered_providers_in_order() -> None:
    assert get_args(ProviderName) == PROVIDER_NAMES


def test_each_dialect_is_registered_under_its_own_name() -> None:
    for name, dialect in DIALECTS.items():
        assert dialect.name == name
        assert dialect_for(name, domain="mg.school.example").name == name


def test_the_standin_answers_for_every_http_provider() -> None:
    # The integration and contract suites run once per stand-in provider: a dialect the
    # stand-in does not know would go untested.
    assert set(standin.PROVIDERS) == set(DIALECTS)


@pytest.mark.parametrize("name", [CONSOLE, "smtp", "Resend", ""])
def test_only_registered_http_providers_have_a_dialect(name: str) -> None:
    with pytest.raises(ValueError, match="no HTTP dialect"):
        dialect_for(name)


def test_is_provider_name() -> None:
    assert all(is_provider_name(name) for name in PROVIDER_NAMES)
    assert not any(is_provider_name(name) for name in ("smtp", "RESEND", " console", ""))


# The settings' texts are part of the command line's behaviour: pinned word for word.


def test_an_unknown_provider_is_refused_with_the_list_of_known_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"LEADMAIL_EMAIL_PROVIDER": "smtp"})

    assert str(caught.value) == (
        "LEADMAIL_EMAIL_PROVIDER must be one of"
        " console, resend, postmark, sendgrid, mailgun, mailpit, got 'smtp'"
    )


@pytest.mark.parametrize("name", NEEDS_KEY)
def test_providers_that_need_a_key_refuse_to_start_without_one(name: str) -> None:
    env = {"LEADMAIL_EMAIL_PROVIDER": name, "LEADMAIL_EMAIL_DOMAIN": "mg.school.example"}

    with pytest.raises(ConfigError) as caught:
        Settings.from_env(env).require_for("serve")

    assert str(caught.value) == f"LEADMAIL_EMAIL_API_KEY is required for the {name} provider"


@pytest.mark.parametrize("name", NEEDS_DOMAIN)
def test_providers_that_need_a_domain_refuse_to_start_without_one(name: str) -> None:
    env = {
        "LEADMAIL_EMAIL_PROVIDER": name,
        "LEADMAIL_EMAIL_API_KEY": "k",
        "LEADMAIL_EMAIL_DOMAIN": " ",
    }

    with pytest.raises(ConfigError) as caught:
        Settings.from_env(env).require_for("worker")

    assert str(caught.value) == f"LEADMAIL_EMAIL_DOMAIN is required for the {name} provider"


def test_which_providers_need_what() -> None:
    assert NEEDS_KEY == ["resend", "postmark", "sendgrid", "mailgun"]
    assert NEEDS_DOMAIN == ["mailgun"]


@pytest.mark.parametrize("name", [CONSOLE, "mailpit"])
def test_providers_that_need_nothing_start_with_nothing(name: str) -> None:
    settings = Settings.from_env({"LEADMAIL_EMAIL_PROVIDER": name.upper()})

    assert settings.email_provider == name
    assert (settings.email_api_key, settings.email_domain) == ("", "")
