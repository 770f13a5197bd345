"""/api/v1/privacy/export and /api/v1/privacy/erase through the app in process: what an
account holds about one address, shown and erased, never another account's."""

from __future__ import annotations

from typing import Any

from tests.api.support import Api, account_auth, plain_email
from tests.support.envelope import (
    LEADS,
    PRIVACY_ERASE,
    PRIVACY_EXPORT,
    SEND,
    SUPPRESSIONS,
    assert_error,
    assert_invalid,
    assert_ok,
)

ADA = "ada@example.com"


async def export(api: Api, email: str, headers: dict[str, str] | None = None) -> Any:
    response = await api.client.get(
        PRIVACY_EXPORT, params={"email": email}, headers=headers or api.auth
    )
    return assert_ok(response)["data"]


async def erase(api: Api, email: str, headers: dict[str, str] | None = None) -> Any:
    response = await api.client.post(
        PRIVACY_ERASE, json={"email": email}, headers=headers or api.auth
    )
    return assert_ok(response)


async def ada_everywhere(api: Api, headers: dict[str, str] | None = None) -> None:
    """Ada's lead, a message to her (by her display name too), and her suppression."""
    auth = headers or api.auth
    added = await api.client.post(
        LEADS, json={"name": "Ada Lovelace", "email": "Ada@Example.com", "tags": ["march"]},
        headers=auth,
    )  # fmt: skip
    assert added.status_code == 200, added.text
    body = plain_email(to=["Ada Lovelace <ada@example.com>", "grace@example.com"])
    assert_ok(await api.client.post(SEND, json=body, headers=auth))
    added = await api.client.post(SUPPRESSIONS, json={"email": ADA}, headers=auth)
    assert added.status_code == 201, added.text


async def test_an_export_shows_the_lead_messages_and_suppression_of_the_address(
    api: Api,
) -> None:
    await ada_everywhere(api)

    data = await export(api, "Ada <ADA@example.com>")

    assert data["email"] == ADA
    assert (data["lead"]["email"], data["lead"]["tags"]) == (
        "Ada@example.com",
        ["march"],
    )  # its domain lower-cased
    [message] = data["messages"]
    assert message["to"] == ['"Ada Lovelace" <ada@example.com>', "grace@example.com"]
    assert message["subject"] == "Your course starts Monday"
    assert message["events"] == []
    assert (data["campaign_recipients"], data["import_errors"]) == ([], [])
    assert (data["suppression"]["email"], data["suppression"]["reason"]) == (ADA, "manual")


async def test_an_erasure_answers_its_counts_then_the_export_shows_nothing(api: Api) -> None:
    await ada_everywhere(api)

    erased = await erase(api, "ADA@example.com")

    assert erased["message"] == "Personal data erased"
    counts = {k: v for k, v in erased["data"].items() if k != "digest"}
    assert counts == {
        "leads": 1, "messages": 1, "events": 0, "campaign_recipients": 0,
        "import_errors": 0, "suppressions": 1,
    }  # fmt: skip
    digest = erased["data"]["digest"]
    assert digest.startswith("sha256:")
    assert ADA not in str(await export(api, "grace@example.com"))  # the message she shared
    data = await export(api, ADA)
    assert (data["lead"], data["messages"], data["campaign_recipients"]) == (None, [], [])
    assert data["import_errors"] == []
    assert data["suppression"]["email"] == digest  # kept as the digest, and still binding
    assert_error(
        await api.client.post(SEND, json=plain_email(to=ADA), headers=api.auth),
        422,
        "RECIPIENT_SUPPRESSED",
    )
    again = await erase(api, ADA)
    assert {k: v for k, v in again["data"].items() if k != "digest"} == dict.fromkeys(counts, 0)
    assert again["data"]["digest"] == digest


async def test_another_accounts_records_are_neither_shown_nor_erased(api: Api) -> None:
    theirs = await account_auth(api, "acc_other_school")
    await ada_everywhere(api, theirs)

    mine = await export(api, ADA)
    erased = await erase(api, ADA)

    assert (mine["lead"], mine["messages"], mine["suppression"]) == (None, [], None)
    assert set(erased["data"].values()) == {0, erased["data"]["digest"]}
    kept = await export(api, ADA, theirs)
    assert kept["lead"]["email"] == "Ada@example.com"
    assert len(kept["messages"]) == 1
    assert kept["suppression"]["email"] == ADA


async def test_bad_input_is_refused_with_nothing_changed(api: Api) -> None:
    await ada_everywhere(api)
    before = await export(api, ADA)

    assert_invalid(await api.client.get(PRIVACY_EXPORT, headers=api.auth), "email")
    assert_invalid(
        await api.client.get(PRIVACY_EXPORT, params={"email": "not an address"}, headers=api.auth),
        "email",
    )
    assert_invalid(
        await api.client.get(PRIVACY_EXPORT, params={"email": "x" * 300}, headers=api.auth),
        "email",
    )
    for body in ({}, {"email": 7}, {"email": ""}, {"email": "ada"}, {"email": ADA, "x": 1}):
        response = await api.client.post(PRIVACY_ERASE, json=body, headers=api.auth)
        assert_error(response, 422, "VALIDATION_FAILED")
    assert_error(
        await api.client.post(PRIVACY_ERASE, content=b"{", headers=api.auth),
        400,
        "MALFORMED_JSON",
    )
    for call in (
        api.client.get(PRIVACY_EXPORT, params={"email": ADA}),
        api.client.post(PRIVACY_ERASE, json={"email": ADA}),
    ):
        assert_error(await call, 401, "UNAUTHORIZED")
    assert await export(api, ADA) == before
