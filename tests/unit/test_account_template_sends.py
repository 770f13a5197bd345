"""An account's own templates on the send paths: a campaign keeps the versions it started
with (the template's and its layout's) through edits of both; a template send takes the
version current when it starts, inside its layout, CSS inlined; another account's template
is not found on any send path."""

from __future__ import annotations

from pathlib import Path

import pytest

from leadmail.domain.campaigns import CampaignStatus
from leadmail.domain.errors import TemplateNotFound
from leadmail.domain.template_drafts import TemplateDraft, TemplateInUse
from leadmail.domain.templates import TemplateKind
from leadmail.services.addressing import TemplateEmailRequest
from leadmail.services.campaign_checks import CampaignRequest
from leadmail.services.template_authoring import TemplateChange
from tests.unit.runner_rig import ACCOUNT, runner_rig

LAYOUT = TemplateDraft(
    name="Letterhead",
    subject="(layout)",
    html="<div><h1>Northwind</h1>{{content}}<p>Leeds</p></div>",
    text="NORTHWIND\n{{content}}\n-- Leeds",
    kind=TemplateKind.LAYOUT,
)
OPEN_DAY = TemplateDraft(
    name="Open day",
    subject="{{first_name}}, our open day",
    html="<style>p { color: red }</style><p>Hi {{first_name}}, doors open at ten.</p>",
    text="Hi {{first_name}}, doors open at ten.",
    layout_id="letterhead",
)


async def test_a_campaign_keeps_its_versions_through_edits_of_template_and_layout(
    tmp_path: Path,
) -> None:
    rig = await runner_rig(tmp_path)
    templates, authoring = rig.services.templates, rig.services.template_authoring
    await authoring.create(ACCOUNT, LAYOUT, "letterhead")
    await authoring.create(ACCOUNT, OPEN_DAY, "open-day")
    await rig.lead("ada@example.com", "Ada Lovelace", first_name="Ada")
    campaign_id = await rig.start(template_id="open-day", variables={})

    await authoring.change(ACCOUNT, "open-day", TemplateChange(subject="CHANGED {{first_name}}"))
    await authoring.change(
        ACCOUNT, "letterhead", TemplateChange(html="<b>NEW</b>{{content}}", text=None)
    )
    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert view.campaign.status is CampaignStatus.DONE
    assert (view.campaign.template_version, view.campaign.layout_version) == (1, 1)
    [sent] = [d.email for d in rig.provider.delivered]
    assert sent.subject == "Ada, our open day"
    assert sent.html.startswith("<div><h1>Northwind</h1>")
    assert '<p style="color: red;">Hi Ada, doors open at ten.</p>' in sent.html
    assert "NEW" not in sent.html
    assert (await templates.get(ACCOUNT, "open-day")).version == 2
    [delivered] = rig.provider.delivered
    message = await rig.adapters.messages.get(ACCOUNT, delivered.message_id)
    assert message is not None
    assert (message.template_id, message.template_version) == ("open-day", 1)


async def test_a_template_in_use_by_a_campaign_or_a_layout_in_use_cannot_be_deleted(
    tmp_path: Path,
) -> None:
    rig = await runner_rig(tmp_path)
    templates, authoring = rig.services.templates, rig.services.template_authoring
    await authoring.create(ACCOUNT, LAYOUT, "letterhead")
    await authoring.create(ACCOUNT, OPEN_DAY, "open-day")
    await rig.lead("ada@example.com", "Ada Lovelace", first_name="Ada")
    campaign_id = await rig.start(template_id="open-day", variables={})

    with pytest.raises(TemplateInUse) as in_use:
        await authoring.delete(ACCOUNT, "open-day")
    assert in_use.value.users == [campaign_id]
    with pytest.raises(TemplateInUse) as layout_in_use:
        await authoring.delete(ACCOUNT, "letterhead")
    assert layout_in_use.value.users == [campaign_id]  # frozen in the campaign

    await rig.run(campaign_id)  # done: no longer a user
    with pytest.raises(TemplateInUse) as still:
        await authoring.delete(ACCOUNT, "letterhead")
    assert still.value.users == ["open-day"]  # the template names it now
    await authoring.delete(ACCOUNT, "open-day")
    await authoring.delete(ACCOUNT, "letterhead")
    with pytest.raises(TemplateNotFound):
        await templates.get(ACCOUNT, "letterhead")


async def test_a_template_send_takes_the_current_version_in_its_layout(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    authoring = rig.services.template_authoring
    await authoring.create(ACCOUNT, LAYOUT, "letterhead")
    await authoring.create(ACCOUNT, OPEN_DAY, "open-day")
    request = TemplateEmailRequest(
        to=["ada@example.com"],
        template_id="open-day",
        variables={"first_name": "Ada"},
        sender="team@example.com",
    )

    before = await rig.services.send_template_email(ACCOUNT, request)
    await authoring.change(ACCOUNT, "open-day", TemplateChange(subject="Welcome, {{first_name}}"))
    after = await rig.services.send_template_email(ACCOUNT, request)

    versions = [m.template_version for m in (*before.messages, *after.messages)]
    assert versions == [1, 2]  # in the message log too

    first, second = [d.email for d in rig.provider.delivered]
    assert (first.subject, second.subject) == ("Ada, our open day", "Welcome, Ada")
    assert first.html.startswith("<div><h1>Northwind</h1>")
    assert '<p style="color: red;">Hi Ada, doors open at ten.</p>' in first.html


async def test_another_accounts_template_is_not_found_on_every_send_path(
    tmp_path: Path,
) -> None:
    rig = await runner_rig(tmp_path)
    theirs = TemplateDraft(name="Theirs", subject="Hi {{first_name}}", html="<p>Theirs</p>")
    await rig.services.template_authoring.create("acc_other", theirs, "theirs")
    await rig.lead("ada@example.com", "Ada Lovelace", first_name="Ada")

    with pytest.raises(TemplateNotFound):
        await rig.services.send_template_email(
            ACCOUNT,
            TemplateEmailRequest(
                to=["ada@example.com"],
                template_id="theirs",
                variables={"first_name": "Ada"},
                sender="team@example.com",
            ),
        )
    with pytest.raises(TemplateNotFound):
        await rig.campaigns.create(
            ACCOUNT,
            CampaignRequest(
                name="Theirs",
                template_id="theirs",
                audience={"tag": "march"},
                variables={},
            ),
        )
    with pytest.raises(TemplateNotFound):
        await rig.services.templates.get(ACCOUNT, "theirs")
    assert rig.provider.delivered == []


async def test_a_layout_is_not_sendable(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    await rig.services.template_authoring.create(ACCOUNT, LAYOUT, "letterhead")

    with pytest.raises(TemplateNotFound):
        await rig.services.templates.sendable(ACCOUNT, "letterhead")
