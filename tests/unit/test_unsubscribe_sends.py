"""The one-click unsubscribe headers and ``{{unsubscribe_url}}`` on every send path, on the
memory adapters: API sends that ask for them, every campaign message, each recipient's own
link, and never a variable a client must give."""

from __future__ import annotations

from pathlib import Path

import pytest

from leadmail.adapters.catalog.files import FileTemplateCatalog
from leadmail.adapters.memory.mail import RecordingEmailProvider
from leadmail.bootstrap import Adapters, wire
from leadmail.config import Settings
from leadmail.domain.campaigns import CampaignStatus
from leadmail.domain.email import OutgoingEmail
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.unsubscribe import UnsubscribeTarget
from leadmail.services.addressing import PlainEmailRequest, TemplateEmailRequest
from leadmail.services.registry import Services
from leadmail.services.unsubscribes import Unsubscribes
from tests.unit.runner_rig import ACCOUNT, runner_rig

BASE = "https://mail.school.example"
KEY = "unit-test-unsubscribe-key-0123456789"
NEWS = """---
id: news
name: News
subject: News for {{first_name}}
---
<p>Hello {{first_name}}. <a href="{{unsubscribe_url}}">Unsubscribe</a></p>
"""

NOTICE = """---
id: notice
name: Notice
subject: A notice
---
<p>The office is closed on {{day}}.</p>
"""


async def read_link(links: Unsubscribes, email: OutgoingEmail) -> UnsubscribeTarget:
    """Who the message's List-Unsubscribe link unsubscribes, checking both headers."""
    headers = dict(email.headers)
    assert list(headers) == ["List-Unsubscribe", "List-Unsubscribe-Post"]
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = headers["List-Unsubscribe"]
    assert link.startswith(f"<{links.public_url}/u/")
    assert link.endswith(">")
    return await links.target(link[1:-1].rpartition("/u/")[2])


async def services_for(tmp_path: Path) -> tuple[Services, RecordingEmailProvider]:
    (tmp_path / "news.html").write_text(NEWS)
    (tmp_path / "notice.html").write_text(NOTICE)
    provider = RecordingEmailProvider()
    adapters = Adapters.in_memory(provider)
    adapters.catalog = FileTemplateCatalog(tmp_path)
    settings = Settings(email_default_from="team@school.example", secret_key=KEY, public_url=BASE)
    services = wire(adapters, settings)
    await services.templates.sync()
    return services, provider


def plain(to: str | list[str], *, list_unsubscribe: bool) -> PlainEmailRequest:
    return PlainEmailRequest(
        to=to, subject="Hello", html="<p>Hi</p>", list_unsubscribe=list_unsubscribe
    )


async def test_a_plain_send_that_asks_carries_its_recipients_link(tmp_path: Path) -> None:
    services, provider = await services_for(tmp_path)

    await services.send_email(ACCOUNT, plain(["Ada <Ada@Example.com>"], list_unsubscribe=True))
    await services.send_email(ACCOUNT, plain("grace@example.com", list_unsubscribe=False))

    asked, plain_one = (d.email for d in provider.delivered)
    links = services.unsubscribes
    assert await read_link(links, asked) == UnsubscribeTarget(ACCOUNT, "ada@example.com")
    assert plain_one.headers == ()


async def test_a_plain_send_to_several_cannot_ask_for_a_link(tmp_path: Path) -> None:
    services, provider = await services_for(tmp_path)

    with pytest.raises(ValidationFailed) as caught:
        await services.send_email(
            ACCOUNT, plain(["ada@example.com", "grace@example.com"], list_unsubscribe=True)
        )

    assert [e.field for e in caught.value.errors] == ["list_unsubscribe"]
    assert provider.delivered == []
    # Several recipients without the flag are one message, as ever.
    await services.send_email(
        ACCOUNT, plain(["ada@example.com", "grace@example.com"], list_unsubscribe=False)
    )
    assert len(provider.delivered) == 1


async def test_a_template_send_gives_each_recipient_a_link_of_their_own(tmp_path: Path) -> None:
    services, provider = await services_for(tmp_path)
    request = TemplateEmailRequest(
        to=["ada@example.com", "grace@example.com"],
        template_id="news",
        variables={"first_name": "Friend"},
        list_unsubscribe=True,
    )

    await services.send_template_email(ACCOUNT, request)

    links = services.unsubscribes
    targets = [await read_link(links, d.email) for d in provider.delivered]
    for delivered, target in zip(provider.delivered, targets, strict=True):
        assert f'href="{links.url(ACCOUNT, target.address)}"' in delivered.email.html
    assert sorted(t.address for t in targets) == ["ada@example.com", "grace@example.com"]
    assert {t.account_id for t in targets} == {ACCOUNT}


async def test_a_template_without_the_variable_still_carries_each_recipients_headers(
    tmp_path: Path,
) -> None:
    services, provider = await services_for(tmp_path)
    request = TemplateEmailRequest(
        to=["ada@example.com", "grace@example.com"],
        template_id="notice",
        variables={"day": "Monday"},
        list_unsubscribe=True,
    )

    await services.send_template_email(ACCOUNT, request)

    ada, grace = (d.email for d in provider.delivered)
    links = services.unsubscribes
    assert (await read_link(links, ada)).address == "ada@example.com"
    assert (await read_link(links, grace)).address == "grace@example.com"
    assert ada.html == grace.html == "<p>The office is closed on Monday.</p>\n"


async def test_a_template_fills_unsubscribe_url_per_recipient_and_never_asks_for_it(
    tmp_path: Path,
) -> None:
    services, provider = await services_for(tmp_path)
    [news] = [t for t in await services.templates.predefined() if t.template_id == "news"]
    assert "unsubscribe_url" in news.variables
    assert news.client_variables == ("first_name",)
    request = TemplateEmailRequest(
        to=["ada@example.com", "grace@example.com"],
        template_id="news",
        # A value given for it is not the link (the service's own is).
        variables={"first_name": "Friend", "unsubscribe_url": "https://evil.example/"},
    )

    result = await services.send_template_email(ACCOUNT, request, "key-news-1")
    again = await services.send_template_email(ACCOUNT, request, "key-news-1")  # a replay

    assert again.replayed
    assert [m.message_id for m in again.messages] == [m.message_id for m in result.messages]
    links = services.unsubscribes
    for delivered in provider.delivered:
        address = delivered.email.to[0].address
        assert f'href="{links.url(ACCOUNT, address)}"' in delivered.email.html
        assert "evil.example" not in delivered.email.html
        assert delivered.email.headers == ()  # the headers only when asked for
    bare = TemplateEmailRequest(to="lin@example.com", template_id="news", variables={})
    with pytest.raises(ValidationFailed) as caught:  # first_name is still asked for
        await services.send_template_email(ACCOUNT, bare)
    assert [e.field for e in caught.value.errors] == ["variables.first_name"]


async def test_every_campaign_message_carries_its_recipients_link(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    (rig.catalog / "news.html").write_text(NEWS)
    await rig.services.templates.sync()
    await rig.lead("ada@example.com", "Ada Lovelace", unsubscribe_url="https://evil.example/")
    for n in range(4):
        await rig.lead(f"l{n}@example.com", f"Lead {n}")
    # Neither the campaign nor its leads give unsubscribe_url: it is not asked for.
    news = await rig.start(template_id="news", variables={})
    hello = await rig.start(template_id="hello")

    await rig.run(news)
    await rig.run(hello)

    assert await rig.status(news) is CampaignStatus.DONE
    assert await rig.status(hello) is CampaignStatus.DONE
    links = rig.services.unsubscribes
    delivered = rig.provider.delivered
    assert len(delivered) == 10
    for message in delivered:
        address = message.email.to[0].address
        assert await read_link(links, message.email) == UnsubscribeTarget(ACCOUNT, address)
        if message.email.subject.startswith("News"):
            assert f'href="{links.url(ACCOUNT, address)}"' in message.email.html
            assert "evil.example" not in message.email.html
