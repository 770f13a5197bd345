"""/api/v1/email/templates through the app in process: an account's own templates and
layouts written, changed (each change a version), read and deleted; every refusal with its
code and nothing stored; predefined templates read-only; another account's templates never
seen or changed, on every verb and every send path."""

from __future__ import annotations

from typing import Any

from leadmail.domain.template_drafts import MAX_TEMPLATES, TemplateDraft
from tests.api.campaign_support import campaign_body
from tests.api.support import SENDER, Api, account_auth, recorder, welcome_email
from tests.support.envelope import (
    CAMPAIGNS,
    TEMPLATE,
    TEMPLATE_FIELDS,
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
    "html": "<div><h1>Northwind</h1>{{content}}<a href='{{unsubscribe_url}}'>Leave</a></div>",
}
OPEN_DAY = {
    "id": "open-day",
    "name": "Open day",
    "subject": "{{first_name}}, come on {{date}}",
    "html": "<p>Hi {{first_name}}, doors open on {{date}}.</p>",
    "layout_id": "letterhead",
}


async def write(api: Api, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    response = await api.client.post(TEMPLATES, json=body, headers=headers or api.auth)
    assert response.status_code == 201, response.text
    answer = response.json()
    assert (answer["success"], answer["error"], answer["message"]) == (
        True, "", "Template created",
    )  # fmt: skip
    assert set(answer["data"]) == TEMPLATE_FIELDS
    return answer["data"]


async def own(api: Api, headers: dict[str, str] | None = None) -> list[Any]:
    listed = assert_ok(await api.client.get(TEMPLATES, headers=headers or api.auth))["data"]
    return [t for t in listed if t["owner"] == "account"]


async def test_a_template_in_a_layout_is_made_listed_and_read(api: Api) -> None:
    layout = await write(api, LAYOUT)
    made = await write(api, OPEN_DAY)

    assert layout["kind"] == "layout"
    assert layout["variables"] == []
    assert made["owner"] == "account"
    assert made["version"] == 1
    assert made["body"] == OPEN_DAY["html"]
    assert made["layout_id"] == "letterhead"
    assert made["inline_css"] is True
    assert made["text"] is None
    assert made["variables"] == ["first_name", "date"]  # never unsubscribe_url
    assert made["updated_at"] == made["created_at"]
    assert [t["id"] for t in await own(api)] == ["letterhead", "open-day"]
    listed = assert_ok(await api.client.get(TEMPLATES, headers=api.auth))["data"]
    assert listed[0]["owner"] == "predefined"
    assert listed[0]["version"] == 1
    got = assert_ok(await api.client.get(f"{TEMPLATES}/open-day", headers=api.auth))["data"]
    assert got == made


async def test_an_id_is_made_from_the_name_when_absent(api: Api) -> None:
    made = await write(api, {"name": "Spring Open Day!", "subject": "Hi", "html": "<p>x</p>"})

    assert made["id"].startswith("spring-open-day-")
    assert len(made["id"]) == len("spring-open-day-") + 6


async def test_each_change_is_a_version_and_omitted_fields_stay(api: Api) -> None:
    await write(api, LAYOUT)
    await write(api, OPEN_DAY)
    one = f"{TEMPLATES}/open-day"

    changed = assert_ok(
        await api.client.put(one, json={"subject": "{{first_name}}: open day"}, headers=api.auth)
    )["data"]
    cleared = assert_ok(
        await api.client.put(one, json={"layout_id": None, "text": "Hi!"}, headers=api.auth)
    )["data"]

    assert (changed["version"], cleared["version"]) == (2, 3)
    assert changed["body"] == OPEN_DAY["html"]
    assert changed["layout_id"] == "letterhead"
    assert (cleared["layout_id"], cleared["text"]) == (None, "Hi!")
    assert cleared["subject"] == "{{first_name}}: open day"
    page = assert_ok(
        await api.client.get(f"{one}/versions", params={"limit": 2}, headers=api.auth)
    )["data"]
    assert [v["version"] for v in page["versions"]] == [3, 2]
    rest = assert_ok(
        await api.client.get(
            f"{one}/versions", params={"cursor": page["next_cursor"]}, headers=api.auth
        )
    )["data"]
    assert ([v["version"] for v in rest["versions"]], rest["next_cursor"]) == ([1], None)
    first = assert_ok(await api.client.get(f"{one}/versions/1", headers=api.auth))["data"]
    assert first["subject"] == OPEN_DAY["subject"]
    assert_error(
        await api.client.get(f"{one}/versions/4", headers=api.auth), 404, "TEMPLATE_NOT_FOUND"
    )


async def test_every_broken_rule_is_one_422_and_nothing_is_stored(api: Api) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({**OPEN_DAY, "layout_id": None, "subject": "Hi {{first name}}"}, "subject"),
        ({**OPEN_DAY, "layout_id": None, "html": "<p>\n  {{ oops }</p>"}, "html"),
        ({**OPEN_DAY, "layout_id": "no-such-layout"}, "layout_id"),
        ({**OPEN_DAY, "id": "Open Day"}, "id"),
        ({**OPEN_DAY, "layout_id": None, "subject": "a\nb"}, "subject"),
        ({**LAYOUT, "html": "<div>no place for the content</div>"}, "html"),
        ({**LAYOUT, "layout_id": "letterhead"}, "layout_id"),
        ({**OPEN_DAY, "layout_id": None, "html": "<p>" + "x" * 600_000 + "</p>"}, "html"),
    ]
    for body, field in cases:
        response = await api.client.post(TEMPLATES, json=body, headers=api.auth)
        assert_invalid(response, field)
    refused = await api.client.post(
        TEMPLATES,
        json={**OPEN_DAY, "layout_id": None, "html": "<p>\n  {{ oops }</p>"},
        headers=api.auth,
    )
    errors = refused.json()["data"]["errors"]
    assert errors[0]["message"].startswith("line 2, column 3: a malformed placeholder near")
    assert await own(api) == []


async def test_ids_taken_are_409_and_predefined_ones_are_read_only(api: Api) -> None:
    await write(api, {**OPEN_DAY, "layout_id": None})
    welcome = f"{TEMPLATES}/welcome"

    assert_error(
        await api.client.post(TEMPLATES, json={**OPEN_DAY, "layout_id": None}, headers=api.auth),
        409,
        "TEMPLATE_EXISTS",
    )
    assert_error(
        await api.client.post(
            TEMPLATES, json={**OPEN_DAY, "id": "welcome", "layout_id": None}, headers=api.auth
        ),
        409,
        "TEMPLATE_EXISTS",
    )
    assert_error(
        await api.client.put(welcome, json={"name": "Mine"}, headers=api.auth),
        403,
        "TEMPLATE_READ_ONLY",
    )
    assert_error(await api.client.delete(welcome, headers=api.auth), 403, "TEMPLATE_READ_ONLY")
    predefined = assert_ok(await api.client.get(welcome, headers=api.auth))["data"]
    assert (predefined["owner"], predefined["version"]) == ("predefined", 1)
    versions = assert_ok(await api.client.get(f"{welcome}/versions", headers=api.auth))["data"]
    assert [v["version"] for v in versions["versions"]] == [1]
    assert [t["id"] for t in await own(api)] == ["open-day"]


async def test_a_change_that_changes_nothing_or_breaks_a_rule_stores_nothing(api: Api) -> None:
    await write(api, {**OPEN_DAY, "layout_id": None})
    one = f"{TEMPLATES}/open-day"

    assert_invalid(await api.client.put(one, json={}, headers=api.auth), "body")
    assert_invalid(await api.client.put(one, json={"html": "{{"}, headers=api.auth), "html")
    assert_invalid(
        await api.client.put(one, json={"inline_css": 0}, headers=api.auth), "inline_css"
    )
    assert_error(
        await api.client.put(f"{TEMPLATES}/nothing", json={"name": "x"}, headers=api.auth),
        404,
        "TEMPLATE_NOT_FOUND",
    )
    got = assert_ok(await api.client.get(one, headers=api.auth))["data"]
    assert got["version"] == 1


async def test_delete_is_refused_while_used_and_then_takes_the_template(api: Api) -> None:
    await write(api, LAYOUT)
    await write(api, OPEN_DAY)
    await api.add_lead(tags=["march"], fields={"first_name": "Ada", "date": "Monday"})
    draft = await api.client.post(
        CAMPAIGNS,
        json=campaign_body(template_id="open-day", variables={}, draft=True),
        headers=api.auth,
    )
    assert draft.status_code == 201, draft.text
    campaign_id = draft.json()["data"]["id"]

    in_use = assert_error(
        await api.client.delete(f"{TEMPLATES}/open-day", headers=api.auth), 409, "TEMPLATE_IN_USE"
    )
    assert campaign_id in in_use["error"]
    layout_in_use = assert_error(
        await api.client.delete(f"{TEMPLATES}/letterhead", headers=api.auth),
        409,
        "TEMPLATE_IN_USE",
    )
    assert "'open-day'" in layout_in_use["error"]
    assert_ok(await api.client.post(f"{CAMPAIGNS}/{campaign_id}/cancel", headers=api.auth))

    deleted = assert_ok(await api.client.delete(f"{TEMPLATES}/open-day", headers=api.auth))
    assert deleted["data"] == {"id": "open-day"}
    assert_ok(await api.client.delete(f"{TEMPLATES}/letterhead", headers=api.auth))
    assert await own(api) == []
    assert_error(
        await api.client.delete(f"{TEMPLATES}/open-day", headers=api.auth),
        404,
        "TEMPLATE_NOT_FOUND",
    )


async def test_a_template_send_renders_the_layout_and_inlines_the_css(api: Api) -> None:
    await write(api, LAYOUT)
    await write(
        api,
        {**OPEN_DAY, "html": "<style>p { color: red }</style><p>Hi {{first_name}} ({{date}})</p>"},
    )
    body = welcome_email(template_id="open-day", variables={"first_name": "Ada", "date": "Mon"})

    assert_ok(await api.client.post(TEMPLATE, json=body, headers=api.auth))

    [sent] = [d.email for d in recorder(api).delivered]
    assert sent.subject == "Ada, come on Mon"
    assert sent.html.startswith("<div><h1>Northwind</h1>")
    assert '<p style="color: red;">Hi Ada (Mon)</p>' in sent.html
    assert 'href="http://127.0.0.1:8000/u/' in sent.html  # the service's link, never asked


async def test_another_account_sees_and_changes_nothing_on_any_verb_or_send(api: Api) -> None:
    await write(api, {**OPEN_DAY, "layout_id": None})
    other = await account_auth(api, "acc_other")
    theirs = f"{TEMPLATES}/open-day"

    assert await own(api, other) == []
    for response in (
        await api.client.get(theirs, headers=other),
        await api.client.put(theirs, json={"name": "Mine now"}, headers=other),
        await api.client.delete(theirs, headers=other),
        await api.client.get(f"{theirs}/versions", headers=other),
        await api.client.get(f"{theirs}/versions/1", headers=other),
        await api.client.post(
            TEMPLATE,
            json=welcome_email(template_id="open-day", variables={"first_name": "A", "date": "M"}),
            headers=other,
        ),
        await api.client.post(CAMPAIGNS, json=campaign_body(template_id="open-day"), headers=other),
        await api.client.post(f"{theirs}/preview", json={}, headers=other),
        await api.client.post(
            f"{theirs}/test", json={"to": "ada@example.com", "from": SENDER}, headers=other
        ),
    ):
        assert_error(response, 404, "TEMPLATE_NOT_FOUND")
    # The same id is free in the other account, and each sees its own.
    await write(api, {**OPEN_DAY, "layout_id": None, "name": "Theirs"}, headers=other)
    mine = assert_ok(await api.client.get(theirs, headers=api.auth))["data"]
    assert (mine["name"], mine["version"]) == ("Open day", 1)
    assert recorder(api).delivered == []


async def test_a_preview_renders_as_a_send_would_and_lists_what_is_missing(api: Api) -> None:
    await write(api, LAYOUT)
    await write(api, OPEN_DAY)
    lead = await api.add_lead(name="Grace Hopper", fields={"date": "Friday"})
    one = f"{TEMPLATES}/open-day/preview"

    bare = assert_ok(await api.client.post(one, json={}, headers=api.auth))["data"]
    with_lead = assert_ok(
        await api.client.post(
            one,
            json={"variables": {"first_name": "Ada", "date": "Monday"}, "lead_id": lead["lead_id"]},
            headers=api.auth,
        )
    )["data"]

    assert bare["missing"] == ["first_name", "date"]
    assert bare["subject"] == "{{first_name}}, come on {{date}}"
    assert bare["html"].startswith("<div><h1>Northwind</h1><p>Hi {{first_name}}")
    assert "/u/" in bare["html"]  # the service's link, as a send has it
    assert bare["text"] is not None
    assert "Hi {{first_name}}, doors open on {{date}}." in bare["text"]
    # The lead's own values over the given ones, as a campaign fills them.
    assert with_lead["missing"] == []
    assert with_lead["subject"] == "Grace, come on Friday"
    assert recorder(api).delivered == []


async def test_a_preview_of_an_older_version_or_for_a_missing_lead(api: Api) -> None:
    await write(api, {**OPEN_DAY, "layout_id": None})
    one = f"{TEMPLATES}/open-day"
    assert_ok(await api.client.put(one, json={"subject": "New {{date}}"}, headers=api.auth))

    old = assert_ok(await api.client.post(f"{one}/preview", json={"version": 1}, headers=api.auth))[
        "data"
    ]
    assert (old["version"], old["subject"]) == (1, "{{first_name}}, come on {{date}}")
    assert_error(
        await api.client.post(f"{one}/preview", json={"version": 3}, headers=api.auth),
        404,
        "TEMPLATE_NOT_FOUND",
    )
    assert_error(
        await api.client.post(
            f"{one}/preview", json={"lead_id": "ld_NoSuchLeadAnywhere0000A"}, headers=api.auth
        ),
        404,
        "LEAD_NOT_FOUND",
    )


async def test_a_test_send_mails_one_address_through_the_rules_marked_as_a_test(
    api: Api,
) -> None:
    await write(api, {**OPEN_DAY, "layout_id": None})
    one = f"{TEMPLATES}/open-day/test"
    body = {"to": "ada@example.com", "variables": {"first_name": "Ada"}, "from": "a@example.com"}

    answer = assert_ok(await api.client.post(one, json=body, headers=api.auth))
    await api.client.post(
        "/api/v1/suppressions", json={"email": "grace@example.com"}, headers=api.auth
    )
    held = assert_ok(
        await api.client.post(one, json={**body, "to": "grace@example.com"}, headers=api.auth)
    )

    [message] = answer["data"]["messages"]
    assert (message["test"], message["template_id"], message["template_version"]) == (
        True, "open-day", 1,
    )  # fmt: skip
    [sent] = [d.email for d in recorder(api).delivered]
    assert sent.subject == "Ada, come on {{date}}"  # a missing value shows as itself
    assert held["data"]["messages"][0]["status"] == "suppressed"
    assert_invalid(
        await api.client.post(one, json={**body, "to": "not an address"}, headers=api.auth),
        "to",
    )


async def test_the_five_hundred_and_first_template_is_422_and_not_stored(api: Api) -> None:
    draft = TemplateDraft(name="Filler", subject="Hi", html="<p>x</p>")
    for n in range(MAX_TEMPLATES):
        await api.services.template_authoring.create(api.account_id, draft, f"filler-{n}")

    refused = await api.client.post(
        TEMPLATES, json={**OPEN_DAY, "layout_id": None}, headers=api.auth
    )

    body = assert_invalid(refused, "id")
    assert "at most 500" in body["error"]
    assert len(await own(api)) == MAX_TEMPLATES
