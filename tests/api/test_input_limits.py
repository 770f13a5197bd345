"""Input limits on the send endpoints, in process: an html part over 512 KB and variables
over 64 KB are 422 naming the field, nothing stored or sent; an address twice in `to` is
sent once."""

from __future__ import annotations

from leadmail.domain.email import MAX_HTML_BYTES
from leadmail.domain.templates import MAX_VARIABLES_BYTES
from tests.api.support import Api, plain_email, recorder, welcome_email
from tests.support.envelope import CAMPAIGNS, MESSAGES, SEND, SEND_TEMPLATE, assert_invalid, ok_data


async def nothing_sent(api: Api) -> None:
    assert recorder(api).delivered == []
    listed = ok_data(await api.client.get(MESSAGES, headers=api.auth))
    assert listed["items"] == []


async def test_an_html_part_over_512_kb_is_refused(api: Api) -> None:
    big = "<p>" + "x" * MAX_HTML_BYTES + "</p>"

    html = await api.client.post(SEND, json=plain_email(html=big), headers=api.auth)
    text = await api.client.post(SEND, json=plain_email(text=big), headers=api.auth)

    assert "larger than 512 KB" in str(assert_invalid(html, "html")["data"])
    assert_invalid(text, "text")
    await nothing_sent(api)


async def test_variables_over_64_kb_are_refused_on_sends_and_campaigns(api: Api) -> None:
    variables = {"first_name": "x" * MAX_VARIABLES_BYTES}

    send = await api.client.post(
        SEND_TEMPLATE, json=welcome_email(variables=variables), headers=api.auth
    )
    campaign = await api.client.post(
        CAMPAIGNS,
        json={"name": "Big", "template_id": "welcome", "audience": {}, "variables": variables},
        headers=api.auth,
    )

    assert "larger than 64 KB" in str(assert_invalid(send, "variables")["data"])
    assert_invalid(campaign, "variables")
    await nothing_sent(api)
    assert ok_data(await api.client.get(CAMPAIGNS, headers=api.auth))["items"] == []


async def test_the_same_address_twice_is_sent_once(api: Api) -> None:
    to = ["Ada <ada@example.com>", "ada@example.com", "grace@example.com", "ADA@example.com"]

    plain = ok_data(await api.client.post(SEND, json=plain_email(to=to), headers=api.auth))
    templated = ok_data(
        await api.client.post(SEND_TEMPLATE, json=welcome_email(to=to), headers=api.auth)
    )

    assert plain["to"] == ['"Ada" <ada@example.com>', "grace@example.com"]
    assert [m["to"] for m in templated["messages"]] == [
        ['"Ada" <ada@example.com>'],
        ["grace@example.com"],
    ]
    delivered = [d.email.to for d in recorder(api).delivered]
    assert sum(len(to) for to in delivered) == 4  # two addresses, two sends
