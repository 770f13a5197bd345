"""Sender identities over the API (in-process, memory adapters): an account's sender domains
hold `from` and `reply_to` at campaign creation and on both send endpoints (403
SENDER_NOT_ALLOWED, nothing stored or sent), an account with none keeps the service's
policy, and a display name holding `@` is 422 naming its field, with or without domains."""

from __future__ import annotations

from typing import Any

import pytest

from leadmail.domain.email import NAME_WITH_AT
from tests.api.campaign_support import campaign_body, create, march_leads
from tests.api.support import (
    EPOCH,
    Api,
    account_auth,
    email_settings,
    open_api,
    plain_email,
    recorder,
    welcome_email,
)
from tests.support.envelope import (
    CAMPAIGNS,
    SEND,
    SEND_TEMPLATE,
    assert_error,
    assert_invalid,
    assert_ok,
    message_for,
)

OWN = "school.example.com"  # the account's sender domain in these tests
SPOOFS = [
    '"billing@bank.example" <school@example.com>',
    "billing@bank.example <school@example.com>",
    "Bank \uff20 billing <school@example.com>",  # a fullwidth @
]


async def given_domains(api: Api, *domains: str) -> None:
    """The account's sender domains, stored before the app has read them (its cache)."""
    for domain in domains:
        await api.adapters.sender_domains.add(api.account_id, domain, EPOCH)


async def no_campaign_stored(api: Api) -> None:
    listed = await api.client.get(CAMPAIGNS, headers=api.auth)
    assert listed.json()["data"]["items"] == []


# --- campaign creation ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field", "domain"),
    [
        ({"from": "ada@example.com"}, "from", "example.com"),
        ({"from": "Ada <ada@mail.school.example.com>"}, "from", "mail.school.example.com"),
        ({"from": f"hi@{OWN}", "reply_to": "Desk <desk@help.example>"}, "reply_to", "help.example"),
    ],
)
async def test_a_campaign_from_or_replying_outside_the_accounts_domains_is_403(
    api: Api, changes: dict[str, Any], field: str, domain: str
) -> None:
    await given_domains(api, OWN)
    await march_leads(api, 1)

    response = await api.client.post(CAMPAIGNS, json=campaign_body(**changes), headers=api.auth)

    body = assert_error(response, 403, "SENDER_NOT_ALLOWED")
    assert f"`{field}`" in body["error"]
    assert repr(domain) in body["error"]
    await no_campaign_stored(api)


async def test_a_campaign_inside_the_accounts_domains_is_created_whatever_the_policy() -> None:
    # The service allows example.com only; the account's own domains replace that rule.
    async with open_api(settings=email_settings(allowed_sender_domains=("example.com",))) as api:
        await given_domains(api, OWN, "news.example.org")
        await march_leads(api, 1)

        addresses: dict[str, Any] = {
            "from": f"School <hi@{OWN.upper()}>",
            "reply_to": "r@news.example.org",
        }
        data = await create(api, **addresses)

        assert (data["from"], data["reply_to"]) == (f'"School" <hi@{OWN}>', "r@news.example.org")
        refused = await api.client.post(
            CAMPAIGNS, json=campaign_body(**{"from": "hi@example.com"}), headers=api.auth
        )
        assert_error(refused, 403, "SENDER_NOT_ALLOWED")


async def test_another_accounts_domains_do_not_hold_this_one(api: Api) -> None:
    other = await account_auth(api, "other-school")
    await given_domains(api, OWN)
    await march_leads(api, 1, headers=other)

    data = await create(api, headers=other, reply_to="desk@help.example")

    assert data["from"] == "school@example.com"


# --- the send endpoints -----------------------------------------------------------------


@pytest.mark.parametrize(("path", "body"), [(SEND, plain_email), (SEND_TEMPLATE, welcome_email)])
async def test_a_send_from_outside_the_accounts_domains_is_403_and_nothing_is_sent(
    api: Api, path: str, body: Any
) -> None:
    await given_domains(api, OWN)

    refused = await api.client.post(path, json=body(), headers=api.auth)
    allowed = await api.client.post(path, json=body(**{"from": f"hi@{OWN}"}), headers=api.auth)

    assert repr("example.com") in assert_error(refused, 403, "SENDER_NOT_ALLOWED")["error"]
    assert_ok(allowed)
    assert [d.email.sender.address for d in recorder(api).delivered] == [f"hi@{OWN}"]


# --- a display name holding @ -----------------------------------------------------------


@pytest.mark.parametrize("with_domains", [False, True])
@pytest.mark.parametrize("spoof", SPOOFS)
@pytest.mark.parametrize(("path", "body"), [(SEND, plain_email), (SEND_TEMPLATE, welcome_email)])
async def test_a_send_whose_from_name_holds_an_at_sign_is_422_naming_from(
    api: Api, path: str, body: Any, spoof: str, with_domains: bool
) -> None:
    if with_domains:
        await given_domains(api, "example.com")

    response = await api.client.post(path, json=body(**{"from": spoof}), headers=api.auth)

    assert message_for(assert_invalid(response, "from"), "from") == NAME_WITH_AT
    assert recorder(api).delivered == []


@pytest.mark.parametrize("with_domains", [False, True])
@pytest.mark.parametrize("spoof", SPOOFS)
@pytest.mark.parametrize("field", ["from", "reply_to"])
async def test_a_campaign_whose_name_holds_an_at_sign_is_422_naming_the_field(
    api: Api, field: str, spoof: str, with_domains: bool
) -> None:
    if with_domains:
        await given_domains(api, "example.com")
    await march_leads(api, 1)

    response = await api.client.post(
        CAMPAIGNS, json=campaign_body(**{field: spoof}), headers=api.auth
    )

    assert message_for(assert_invalid(response, field), field) == NAME_WITH_AT
    await no_campaign_stored(api)


async def test_both_names_holding_an_at_sign_are_named_at_once(api: Api) -> None:
    await march_leads(api, 1)
    both = {"from": SPOOFS[0], "reply_to": SPOOFS[1]}

    response = await api.client.post(CAMPAIGNS, json=campaign_body(**both), headers=api.auth)

    errors = assert_invalid(response, "from")["data"]["errors"]
    assert {e["field"] for e in errors} == {"from", "reply_to"}
