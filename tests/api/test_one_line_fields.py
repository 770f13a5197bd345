"""One-line fields (a lead's name and source, a campaign's name, a subject, a display name
in an address) refuse every line break, control character, bidirectional control and
invisible character, 422 naming the field, and store nothing (issue 24); joiners inside a
word or an emoji sequence stay."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.campaign_support import campaign_body
from tests.api.support import SENDER, Api, plain_email, recorder
from tests.support.envelope import CAMPAIGNS, LEADS, SEND, assert_invalid

BREAKING = {
    "LINE SEPARATOR": "\u2028",
    "PARAGRAPH SEPARATOR": "\u2029",
    "NEL": "\x85",
    "VT": "\x0b",
    "FF": "\x0c",
    "RLO": "\u202e",
    "LRE": "\u202a",
    "RLI": "\u2067",
    "PDI": "\u2069",
    "RLM": "\u200f",
    "ZWSP": "\u200b",
    "WORD JOINER": "\u2060",
    "BOM": "\ufeff",
    "ZWJ alone": " \u200d ",
}
LEAD = {"name": "Ada Lovelace", "email": "ada@example.com"}


def text_with(char: str) -> str:
    return f"Acme{char}Bcc: evil@x.example"


async def refused(api: Api, method: str, url: str, body: dict[str, Any], field: str) -> None:
    response = await api.client.request(method, url, json=body, headers=api.auth)
    assert_invalid(response, field)


@pytest.mark.parametrize("char", BREAKING.values(), ids=BREAKING.keys())
async def test_a_lead_refuses_them_in_its_name_and_source(api: Api, char: str) -> None:
    await refused(api, "POST", LEADS, {**LEAD, "name": text_with(char)}, "name")
    await refused(api, "POST", LEADS, {**LEAD, "source": text_with(char)}, "source")
    lead = await api.add_lead()
    await refused(api, "PUT", f"{LEADS}/{lead['lead_id']}", {"name": text_with(char)}, "name")

    assert [x["name"] for x in await api.all_leads()] == ["Ada Lovelace"]


@pytest.mark.parametrize("char", BREAKING.values(), ids=BREAKING.keys())
async def test_a_campaign_refuses_them_in_its_name(api: Api, char: str) -> None:
    await api.add_lead(tags=["march"])

    await refused(api, "POST", CAMPAIGNS, campaign_body(name=text_with(char)), "name")

    assert (await api.client.get(CAMPAIGNS, headers=api.auth)).json()["data"]["items"] == []


@pytest.mark.parametrize("char", BREAKING.values(), ids=BREAKING.keys())
async def test_a_send_refuses_them_in_the_subject_and_display_names(api: Api, char: str) -> None:
    named = f'"{text_with(char)}" <school@example.com>'
    await refused(api, "POST", SEND, plain_email(subject=text_with(char)), "subject")
    await refused(api, "POST", SEND, plain_email(**{"from": named}), "from")
    await refused(api, "POST", SEND, plain_email(to=[named]), "to[0]")

    assert recorder(api).delivered == []


async def test_joiners_inside_a_word_or_an_emoji_are_kept(api: Api) -> None:
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # a ZWNJ inside a word
    coder = "\U0001f469\u200d\U0001f4bb"  # woman + ZWJ + laptop: one emoji

    lead = await api.add_lead(name=f"{persian} {coder}", source=coder)
    response = await api.client.post(
        SEND, json=plain_email(subject=f"{coder} Your course", **{"from": SENDER}), headers=api.auth
    )

    assert lead["name"] == f"{persian} {coder}"
    assert response.status_code == 200, response.text
    assert recorder(api).delivered[0].email.subject == f"{coder} Your course"
