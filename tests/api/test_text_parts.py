"""Every message carries a plain-text part: a plain send's own `text`, a template's `text`
(inside its layout's), or one derived from the HTML (links kept as `text (url)`); both send
endpoints take `reply_to`, held to the rules of `from`."""

from __future__ import annotations

from leadmail.services.send_email import DERIVE_ON_LOOP
from tests.api.support import Api, plain_email, recorder, welcome_email
from tests.support.envelope import (
    SEND,
    TEMPLATE,
    TEMPLATES,
    assert_error,
    assert_invalid,
    assert_ok,
)

LAYOUT = {
    "id": "letterhead",
    "kind": "layout",
    "name": "Letterhead",
    "subject": "Northwind",
    "html": "<h1>Northwind</h1>{{content}}",
    "text": "NORTHWIND\n\n{{content}}\n\n-- Leeds",
}


async def test_a_plain_send_carries_its_text_and_reply_to(api: Api) -> None:
    body = plain_email(text="See you on Monday.", reply_to="Office <office@example.com>")

    assert_ok(await api.client.post(SEND, json=body, headers=api.auth))

    [sent] = [d.email for d in recorder(api).delivered]
    assert sent.text == "See you on Monday."
    assert sent.reply_to is not None
    assert (sent.reply_to.name, sent.reply_to.address) == ("Office", "office@example.com")


async def test_a_plain_send_without_text_carries_one_derived_from_its_html(api: Api) -> None:
    html = '<h1>Open day</h1><p>See the <a href="https://example.com/day">programme</a>.</p>'

    assert_ok(await api.client.post(SEND, json=plain_email(html=html), headers=api.auth))

    [sent] = [d.email for d in recorder(api).delivered]
    assert sent.text == "Open day\n\nSee the programme (https://example.com/day)."
    assert sent.reply_to is None


async def test_a_long_plain_sends_text_is_derived_too(api: Api) -> None:
    # Past DERIVE_ON_LOOP the converter runs in a worker thread: the same text comes back.
    paragraph = "<p>Week {n}: <b>bold</b> &amp; plain</p>"
    html = "".join(paragraph.format(n=n) for n in range(400))
    assert len(html) > DERIVE_ON_LOOP

    assert_ok(await api.client.post(SEND, json=plain_email(html=html), headers=api.auth))

    [sent] = [d.email for d in recorder(api).delivered]
    assert sent.text == "\n\n".join(f"Week {n}: bold & plain" for n in range(400))


async def test_an_empty_text_sends_html_only(api: Api) -> None:
    assert_ok(await api.client.post(SEND, json=plain_email(text=""), headers=api.auth))

    [sent] = [d.email for d in recorder(api).delivered]
    assert (sent.text, sent.html) == (None, "<p>See you on Monday.</p>")


async def test_an_html_of_only_an_image_has_no_text_part(api: Api) -> None:
    html = '<img src="https://example.com/poster.png">'

    assert_ok(await api.client.post(SEND, json=plain_email(html=html), headers=api.auth))

    [sent] = [d.email for d in recorder(api).delivered]
    assert sent.text is None


async def test_one_key_with_and_without_an_empty_text_is_two_requests(api: Api) -> None:
    # "" (HTML only) and no `text` (a derived part) send different messages: one
    # Idempotency-Key may not stand for both.
    headers = {**api.auth, "Idempotency-Key": "text-part-1"}
    assert_ok(await api.client.post(SEND, json=plain_email(), headers=headers))

    answer = await api.client.post(SEND, json=plain_email(text=""), headers=headers)

    assert_error(answer, 409, "IDEMPOTENCY_KEY_REUSED")
    assert len(recorder(api).delivered) == 1


async def test_a_template_without_text_sends_one_derived_from_its_html(api: Api) -> None:
    body = welcome_email(reply_to="admissions@example.com")

    assert_ok(await api.client.post(TEMPLATE, json=body, headers=api.auth))

    [sent] = [d.email for d in recorder(api).delivered]
    assert sent.text is not None
    assert "Welcome, Ada!" in sent.text
    # The link's text and its url, the url filled raw (never HTML-escaped in text).
    assert "https://example.com/courses" in sent.text
    assert "<" not in sent.text
    assert sent.reply_to is not None
    assert sent.reply_to.address == "admissions@example.com"


async def test_a_templates_text_goes_inside_its_layouts_text(api: Api) -> None:
    made = await api.client.post(TEMPLATES, json=LAYOUT, headers=api.auth)
    assert made.status_code == 201, made.text
    template = {
        "id": "note",
        "name": "Note",
        "subject": "A note for {{first_name}}",
        "html": "<p>Hi {{first_name}} &amp; co</p>",
        "text": "Hi {{first_name}} & co",
        "layout_id": "letterhead",
    }
    made = await api.client.post(TEMPLATES, json=template, headers=api.auth)
    assert made.status_code == 201, made.text
    body = welcome_email(template_id="note", variables={"first_name": "Zoë <3"})

    assert_ok(await api.client.post(TEMPLATE, json=body, headers=api.auth))

    [sent] = [d.email for d in recorder(api).delivered]
    assert sent.text == "NORTHWIND\n\nHi Zoë <3 & co\n\n-- Leeds"
    assert "<p>Hi Zoë &lt;3 &amp; co</p>" in sent.html


async def test_a_bad_text_or_reply_to_is_422_naming_it_and_nothing_is_sent(api: Api) -> None:
    for body, field in (
        (plain_email(text="  "), "text"),
        (plain_email(reply_to="not an address"), "reply_to"),
        (plain_email(reply_to=""), "reply_to"),
        (welcome_email(reply_to="Ada @ Home <ada@example.com>"), "reply_to"),
    ):
        path = TEMPLATE if "template_id" in body else SEND
        assert_invalid(await api.client.post(path, json=body, headers=api.auth), field)
    assert recorder(api).delivered == []


async def test_a_reply_to_outside_the_accounts_sender_domains_is_403(api: Api) -> None:
    await api.services.sender_domains.add(api.account_id, "example.com")
    body = plain_email(reply_to="replies@elsewhere.example")  # from school@example.com

    refused = assert_error(
        await api.client.post(SEND, json=body, headers=api.auth), 403, "SENDER_NOT_ALLOWED"
    )

    assert "reply_to" in refused["error"]
    assert recorder(api).delivered == []
