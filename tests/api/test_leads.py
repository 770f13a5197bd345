"""Add, read, update and delete leads over HTTP: the shapes and rules the service promises."""

from __future__ import annotations

from datetime import datetime

from tests.api.support import EPOCH, Api
from tests.support.envelope import ISO_UTC, LEAD_FIELDS, LEADS, assert_error, assert_ok


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_adding_a_lead_returns_it_in_the_envelope(api: Api) -> None:
    body = {
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "source": "webinar",
        "note": "Asked about the evening course",
    }

    response = await api.client.post(LEADS, json=body, headers=api.auth)

    envelope = assert_ok(response)
    assert "added" in envelope["message"].lower()
    lead = envelope["data"]
    assert set(lead) == LEAD_FIELDS
    assert lead["lead_id"]
    assert {k: lead[k] for k in body} == body
    assert ISO_UTC.fullmatch(lead["created_at"])
    assert ISO_UTC.fullmatch(lead["updated_at"])
    assert lead["updated_at"] == lead["created_at"]


async def test_source_and_note_may_be_omitted_and_default_to_empty(api: Api) -> None:
    lead = await api.add_lead(name="Grace", email="grace@example.com")

    assert lead["source"] == ""
    assert lead["note"] == ""


async def test_each_new_lead_gets_its_own_id(api: Api) -> None:
    first = await api.add_lead(email="one@example.com")
    second = await api.add_lead(email="two@example.com")

    assert first["lead_id"] != second["lead_id"]


async def test_name_is_trimmed_and_the_email_domain_lower_cased(api: Api) -> None:
    lead = await api.add_lead(name="  Ada  ", email="Ada@Example.COM")

    assert lead["name"] == "Ada"
    assert lead["email"] == "Ada@example.com"


async def test_fields_at_their_maximum_length_are_accepted(api: Api) -> None:
    lead = await api.add_lead(name="n" * 200, email="max@example.com", note="x" * 10_000)

    assert len(lead["name"]) == 200
    assert len(lead["note"]) == 10_000


async def test_unicode_is_kept_as_sent(api: Api) -> None:
    lead = await api.add_lead(name="Zoë Ångström 学生", note="🎓 «maybe»", email="zoe@example.com")

    fetched = assert_ok(await api.client.get(f"{LEADS}/{lead['lead_id']}", headers=api.auth))
    assert fetched["data"]["name"] == "Zoë Ångström 学生"
    assert fetched["data"]["note"] == "🎓 «maybe»"


async def test_a_second_lead_with_the_same_email_in_another_case_is_409(api: Api) -> None:
    first = await api.add_lead(email="Ada@example.com")

    response = await api.client.post(
        LEADS, json={"name": "Ada again", "email": "aDA@EXAMPLE.com"}, headers=api.auth
    )

    body = assert_error(response, 409, "LEAD_EXISTS")
    assert body["data"]["lead_id"] == first["lead_id"]
    assert [lead["lead_id"] for lead in await api.all_leads()] == [first["lead_id"]]


async def test_getting_a_lead_returns_what_was_added(api: Api) -> None:
    added = await api.add_lead(source="ads", note="n")

    response = await api.client.get(f"{LEADS}/{added['lead_id']}", headers=api.auth)

    assert assert_ok(response)["data"] == added


async def test_getting_an_unknown_lead_is_404(api: Api) -> None:
    response = await api.client.get(f"{LEADS}/ld_doesnotexist", headers=api.auth)

    body = assert_error(response, 404, "LEAD_NOT_FOUND")
    assert "ld_doesnotexist" in body["error"]


async def test_a_partial_update_changes_only_what_was_sent(api: Api) -> None:
    seeded = await api.seed(name="Ada", email="ada@example.com", source="ads", note="old")

    response = await api.client.put(
        f"{LEADS}/{seeded.lead_id}", json={"note": "new note"}, headers=api.auth
    )

    envelope = assert_ok(response)
    assert "updated" in envelope["message"].lower()
    lead = envelope["data"]
    assert set(lead) == LEAD_FIELDS
    assert lead["lead_id"] == seeded.lead_id
    assert (lead["name"], lead["email"], lead["source"], lead["note"]) == (
        "Ada",
        "ada@example.com",
        "ads",
        "new note",
    )
    assert ISO_UTC.fullmatch(lead["created_at"])
    assert ISO_UTC.fullmatch(lead["updated_at"])
    assert _moment(lead["created_at"]) == EPOCH
    assert _moment(lead["updated_at"]) > EPOCH
    fetched = assert_ok(await api.client.get(f"{LEADS}/{seeded.lead_id}", headers=api.auth))
    assert fetched["data"] == lead


async def test_every_client_field_can_be_updated_at_once(api: Api) -> None:
    added = await api.add_lead()
    change = {"name": "Grace", "email": "grace@example.com", "source": "fair", "note": "n2"}

    response = await api.client.put(f"{LEADS}/{added['lead_id']}", json=change, headers=api.auth)

    assert {k: assert_ok(response)["data"][k] for k in change} == change


async def test_updating_a_lead_to_its_own_email_in_another_case_is_allowed(api: Api) -> None:
    added = await api.add_lead(email="ada@example.com")

    response = await api.client.put(
        f"{LEADS}/{added['lead_id']}", json={"email": "ADA@example.com"}, headers=api.auth
    )

    assert assert_ok(response)["data"]["email"] == "ADA@example.com"


async def test_updating_to_another_leads_email_is_409_and_changes_nothing(api: Api) -> None:
    ada = await api.add_lead(name="Ada", email="ada@example.com")
    grace = await api.add_lead(name="Grace", email="grace@example.com")

    response = await api.client.put(
        f"{LEADS}/{grace['lead_id']}",
        json={"name": "Renamed", "email": "Ada@Example.com"},
        headers=api.auth,
    )

    body = assert_error(response, 409, "LEAD_EXISTS")
    assert body["data"]["lead_id"] == ada["lead_id"]
    fetched = assert_ok(await api.client.get(f"{LEADS}/{grace['lead_id']}", headers=api.auth))
    assert fetched["data"] == grace


async def test_updating_an_unknown_lead_is_404(api: Api) -> None:
    response = await api.client.put(f"{LEADS}/ld_nope", json={"note": "x"}, headers=api.auth)

    assert_error(response, 404, "LEAD_NOT_FOUND")
    assert await api.all_leads() == []


async def test_deleting_a_lead_removes_it(api: Api) -> None:
    keep = await api.add_lead(email="keep@example.com")
    gone = await api.add_lead(email="gone@example.com")

    response = await api.client.delete(f"{LEADS}/{gone['lead_id']}", headers=api.auth)

    envelope = assert_ok(response)
    assert "deleted" in envelope["message"].lower()
    after = await api.client.get(f"{LEADS}/{gone['lead_id']}", headers=api.auth)
    assert_error(after, 404, "LEAD_NOT_FOUND")
    assert [lead["lead_id"] for lead in await api.all_leads()] == [keep["lead_id"]]


async def test_deleting_twice_is_404_the_second_time(api: Api) -> None:
    lead = await api.add_lead()
    assert_ok(await api.client.delete(f"{LEADS}/{lead['lead_id']}", headers=api.auth))

    response = await api.client.delete(f"{LEADS}/{lead['lead_id']}", headers=api.auth)

    assert_error(response, 404, "LEAD_NOT_FOUND")


async def test_a_deleted_leads_email_can_be_added_again(api: Api) -> None:
    first = await api.add_lead(email="ada@example.com")
    assert_ok(await api.client.delete(f"{LEADS}/{first['lead_id']}", headers=api.auth))

    again = await api.add_lead(email="ada@example.com")

    assert again["lead_id"] != first["lead_id"]


async def test_updating_a_deleted_lead_is_404(api: Api) -> None:
    lead = await api.add_lead()
    assert_ok(await api.client.delete(f"{LEADS}/{lead['lead_id']}", headers=api.auth))

    response = await api.client.put(
        f"{LEADS}/{lead['lead_id']}", json={"note": "x"}, headers=api.auth
    )

    assert_error(response, 404, "LEAD_NOT_FOUND")
    assert await api.all_leads() == []
