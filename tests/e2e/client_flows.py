"""The README's flows through a client generated from the live OpenAPI document, typed.

tests/e2e/test_generated_client.py generates ``leadmail_client`` (openapi-python-client)
from a running ``leadmail serve``, type-checks this file against it with ``mypy --strict``,
then runs it:

    python client_flows.py BASE_URL KEY FAILING_URL FAILING_KEY

BASE_URL sends with the ``console`` provider; FAILING_URL sends through a stand-in provider
told to refuse the first message (502) and to be unavailable for the next (503).

Every result is read as the model the document declares for its status, through typed
attributes (``conflict.data.lead_id``): where the document leaves a field untyped, optional
or named otherwise, mypy --strict fails here. The modules are the operationIds in
snake_case under their tag. The component names this relies on are the import below:
LeadEnvelope, LeadPageEnvelope, DeletedLeadEnvelope, TemplateListEnvelope, MessageEnvelope,
MessageListEnvelope (success); ErrorEnvelope (401, 404), ValidationErrorEnvelope (422),
LeadExistsEnvelope (409 of addLead), ImportEnvelope and ImportLeadsBody (importLeads: the
file as a multipart form's part, the generator's name for the body), RefusedEnvelope (422
of createCampaign: data only for VALIDATION_FAILED), CampaignEnvelope, CampaignPageEnvelope,
RecipientPageEnvelope, NewCampaign, NewCampaignAudience, NewCampaignVariables (campaigns),
SendRejectedEnvelope and TemplateSendRejectedEnvelope (502 of sendEmail and
sendTemplateEmail), SendUnavailableEnvelope and TemplateSendUnavailableEnvelope (their 503);
NewLead, LeadChanges, SendEmailRequest, SendTemplateEmailRequest,
SendTemplateEmailRequestVariables (bodies). (The generator names a
model after its schema's ``title``; and a model must not be named like one of its own
fields, as ``Messages`` with ``messages``: its generated ``from_dict`` then fails mypy.)

Not checked or collected by the project's own mypy and pytest (pyproject.toml): the
package it imports exists only once generated.
"""

from __future__ import annotations

import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from typing import TypeVar

import httpx
from leadmail_client import AuthenticatedClient
from leadmail_client.api.campaigns import (
    cancel_campaign,
    create_campaign,
    list_campaign_recipients,
    list_campaigns,
    pause_campaign,
)
from leadmail_client.api.email import (
    create_template,
    delete_template,
    get_message,
    get_template_version,
    list_template_versions,
    list_templates,
    send_email,
    send_template_email,
    update_template,
)
from leadmail_client.api.leads import (
    add_lead,
    delete_lead,
    get_lead,
    get_lead_import,
    import_leads,
    list_leads,
    update_lead,
)
from leadmail_client.models import (
    CampaignEnvelope,
    CampaignPageEnvelope,
    DeletedLeadEnvelope,
    DeletedTemplateEnvelope,
    ErrorEnvelope,
    ImportEnvelope,
    ImportLeadsBody,
    ImportOutStatus,
    LeadChanges,
    LeadEnvelope,
    LeadExistsEnvelope,
    LeadPageEnvelope,
    ListCampaignRecipientsStatus,
    MessageEnvelope,
    MessageList,
    MessageListEnvelope,
    NewCampaign,
    NewCampaignAudience,
    NewCampaignVariables,
    NewLead,
    RecipientPageEnvelope,
    RefusedEnvelope,
    SendEmailRequest,
    SendRejectedEnvelope,
    SendTemplateEmailRequest,
    SendTemplateEmailRequestVariables,
    TemplateChange,
    TemplateEnvelope,
    TemplateInput,
    TemplateInputKind,
    TemplateListEnvelope,
    TemplateSendUnavailableEnvelope,
    TemplateVersionsEnvelope,
    ValidationErrorEnvelope,
)
from leadmail_client.types import Response, Unset

SENDER = "Acme Academy <hello@acme.example>"
WELCOME = {
    "school_name": "Acme Academy",
    "first_name": "Ada",
    "courses_link": "https://acme.example/courses",
    "contact_email": "hello@acme.example",
}
UNKNOWN_KEY = "lm_" + "A" * 43  # well formed, never issued
IMPORT_WAIT_S = 30.0

R = TypeVar("R")
M = TypeVar("M")


def expect(response: Response[R], status: HTTPStatus, model: type[M]) -> M:
    """The answer, which must have ``status`` and be parsed as ``model``."""
    assert response.status_code == status, (response.status_code, response.content)
    parsed = response.parsed
    assert isinstance(parsed, model), (status, type(parsed).__name__, response.content)
    return parsed


def lead_flows(api: AuthenticatedClient, stranger: AuthenticatedClient, tag: str) -> None:
    email = f"ada-{tag}@example.com"
    body = NewLead(
        name="Ada Lovelace",
        email=email,
        source="website",
        note="Asked about evening classes",
        phone="+44 20 7946 0958",
    )
    added = expect(add_lead.sync_detailed(client=api, body=body), HTTPStatus.OK, LeadEnvelope)
    assert (added.success, added.error) == (True, ""), added
    lead = added.data
    fields: tuple[str, str, str, str, str] = (
        lead.name,
        lead.email,
        lead.source,
        lead.note,
        lead.phone,
    )
    expected = ("Ada Lovelace", email, "website", "Asked about evening classes", "+44 20 7946 0958")
    assert fields == expected, fields
    lead_id: str = lead.lead_id
    assert lead_id.startswith("ld_"), lead_id
    created: datetime = lead.created_at
    assert created.utcoffset() == timedelta(0), lead
    assert lead.updated_at == created, lead

    got = expect(get_lead.sync_detailed(lead_id, client=api), HTTPStatus.OK, LeadEnvelope)
    assert (got.data.lead_id, got.data.created_at) == (lead_id, created), got

    change = LeadChanges(note="Enrolled in the March cohort")
    changed = expect(
        update_lead.sync_detailed(lead_id, client=api, body=change), HTTPStatus.OK, LeadEnvelope
    ).data
    assert (changed.note, changed.source) == ("Enrolled in the March cohort", "website"), changed
    moved: datetime = changed.updated_at
    assert moved >= created, changed

    listed = list_leads.sync_detailed(client=api, email=email.upper(), limit=20)
    page = expect(listed, HTTPStatus.OK, LeadPageEnvelope).data
    ids: list[str] = [item.lead_id for item in page.items]
    cursor: str | None = page.next_cursor
    assert (ids, cursor) == ([lead_id], None), page

    again = NewLead(name="Ada again", email=email.upper())
    conflict = expect(
        add_lead.sync_detailed(client=api, body=again), HTTPStatus.CONFLICT, LeadExistsEnvelope
    )
    existing: str = conflict.data.lead_id
    assert (existing, conflict.code) == (lead_id, "LEAD_EXISTS"), conflict

    wrong = NewLead(name="Ada", email="not-an-address")
    invalid = expect(
        add_lead.sync_detailed(client=api, body=wrong),
        HTTPStatus.UNPROCESSABLE_ENTITY,
        ValidationErrorEnvelope,
    )
    named: list[tuple[str, str]] = [(e.field, e.message) for e in invalid.data.errors]
    assert [field for field, _ in named] == ["email"], named
    assert (invalid.code, invalid.success) == ("VALIDATION_FAILED", False), invalid

    removal = delete_lead.sync_detailed(lead_id, client=api)
    deleted = expect(removal, HTTPStatus.OK, DeletedLeadEnvelope)
    gone: str = deleted.data.lead_id
    assert gone == lead_id, deleted

    lookup = get_lead.sync_detailed(lead_id, client=api)
    missing = expect(lookup, HTTPStatus.NOT_FOUND, ErrorEnvelope)
    assert missing.code == "LEAD_NOT_FOUND", missing

    refused = list_leads.sync_detailed(client=stranger)
    unauthorized = expect(refused, HTTPStatus.UNAUTHORIZED, ErrorEnvelope)
    assert unauthorized.code == "UNAUTHORIZED", unauthorized


def import_flows(api: AuthenticatedClient, tag: str) -> None:
    """A CSV file imported through the generated client (a multipart form's ``file``)."""
    ada, grace = f"ada-import-{tag}@example.com", f"grace-import-{tag}@example.com"
    file = f"email,name,city\r\n{ada},Ada Lovelace,Leeds\r\n{grace},Grace Hopper,York\r\n"
    queued = import_leads.sync_detailed(client=api, body=ImportLeadsBody(file=file), tags=tag)
    started = expect(queued, HTTPStatus.ACCEPTED, ImportEnvelope).data
    import_id: str = started.id
    assert import_id.startswith("imp_"), started

    deadline = time.monotonic() + IMPORT_WAIT_S
    while True:
        read = get_lead_import.sync_detailed(import_id, client=api)
        progress = expect(read, HTTPStatus.OK, ImportEnvelope).data
        if progress.status in (ImportOutStatus.DONE, ImportOutStatus.FAILED):
            break
        assert time.monotonic() < deadline, progress
        time.sleep(0.1)
    counts: tuple[ImportOutStatus, int, int] = (progress.status, progress.created, progress.failed)
    assert counts == (ImportOutStatus.DONE, 2, 0), progress

    found = list_leads.sync_detailed(client=api, email=ada)
    [lead] = expect(found, HTTPStatus.OK, LeadPageEnvelope).data.items
    assert (lead.name, lead.tags, lead.fields["city"]) == ("Ada Lovelace", [tag], "Leeds"), lead

    empty = import_leads.sync_detailed(client=api, body=ImportLeadsBody(file=""))
    refused = expect(empty, HTTPStatus.UNPROCESSABLE_ENTITY, ValidationErrorEnvelope)
    assert [e.field for e in refused.data.errors] == ["body"], refused


def email_flows(api: AuthenticatedClient, tag: str) -> None:
    catalog = list_templates.sync_detailed(client=api)
    templates = expect(catalog, HTTPStatus.OK, TemplateListEnvelope)
    welcome = next(t for t in templates.data if t.id == "welcome")
    variables: list[str] = welcome.variables
    assert sorted(variables) == sorted(WELCOME), variables

    ada, grace = f"ada-{tag}@example.com", f"grace-{tag}@example.com"
    plain = SendEmailRequest(
        to=f"Ada Lovelace <{ada}>",
        subject="Your place is saved",
        html="<p>See you on Monday!</p>",
        from_=SENDER,
    )
    one = send_email.sync_detailed(client=api, body=plain, idempotency_key=f"welcome-{tag}")
    sent = expect(one, HTTPStatus.OK, MessageEnvelope).data
    recipients: list[str] = sent.to
    attempts: int = sent.attempts
    assert (sent.status, sent.provider, attempts) == ("sent", "console", 1), sent
    assert (recipients, sent.template_id) == ([f'"Ada Lovelace" <{ada}>'], None), sent

    read = expect(get_message.sync_detailed(sent.id, client=api), HTTPStatus.OK, MessageEnvelope)
    assert (read.data.id, read.data.status) == (sent.id, "sent"), read

    batch = SendTemplateEmailRequest(
        to=[ada, grace],
        template_id="welcome",
        variables=SendTemplateEmailRequestVariables.from_dict(WELCOME),
        from_=SENDER,
    )
    each = send_template_email.sync_detailed(client=api, body=batch)
    messages = expect(each, HTTPStatus.OK, MessageListEnvelope).data.messages
    assert [m.to for m in messages] == [[ada], [grace]], messages
    assert [(m.status, m.template_id) for m in messages] == [("sent", "welcome")] * 2, messages


def template_flows(api: AuthenticatedClient, tag: str) -> None:
    layout_id, template_id = f"letterhead-{tag}", f"open-day-{tag}"
    layout = TemplateInput(
        id=layout_id,
        kind=TemplateInputKind.LAYOUT,
        name="Letterhead",
        subject="Acme Academy",
        html="<h1>Acme Academy</h1>{{content}}",
    )
    made = create_template.sync_detailed(client=api, body=layout)
    assert expect(made, HTTPStatus.CREATED, TemplateEnvelope).data.kind == "layout"
    body = TemplateInput(
        id=template_id,
        name="Open day",
        subject="{{first_name}}, come on {{date}}",
        html="<p>Hi {{first_name}}, doors open on {{date}}.</p>",
        layout_id=layout_id,
    )
    created = expect(
        create_template.sync_detailed(client=api, body=body), HTTPStatus.CREATED, TemplateEnvelope
    ).data
    version: int = created.version
    assert (created.owner, version, created.variables) == ("account", 1, ["first_name", "date"])
    change = TemplateChange(subject="{{first_name}}: our open day is on {{date}}")
    changed = update_template.sync_detailed(template_id, client=api, body=change)
    assert expect(changed, HTTPStatus.OK, TemplateEnvelope).data.version == 2
    page = expect(
        list_template_versions.sync_detailed(template_id, client=api, limit=1),
        HTTPStatus.OK,
        TemplateVersionsEnvelope,
    ).data
    assert ([v.version for v in page.versions], page.next_cursor) == ([2], "2"), page
    first = get_template_version.sync_detailed(template_id, "1", client=api)
    assert expect(first, HTTPStatus.OK, TemplateEnvelope).data.subject == body.subject
    gone = delete_template.sync_detailed(template_id, client=api)
    assert expect(gone, HTTPStatus.OK, DeletedTemplateEnvelope).data.id == template_id
    missing = delete_template.sync_detailed(template_id, client=api)
    assert expect(missing, HTTPStatus.NOT_FOUND, ErrorEnvelope).code == "TEMPLATE_NOT_FOUND"


def campaign_flows(api: AuthenticatedClient, tag: str) -> None:
    march = f"march-{tag}"
    ada = f"ada-campaign-{tag}@example.com"
    lead = NewLead(name="Ada Lovelace", email=ada, tags=[march])
    expect(add_lead.sync_detailed(client=api, body=lead), HTTPStatus.OK, LeadEnvelope)
    shared = {name: value for name, value in WELCOME.items() if name != "first_name"}

    # An hour ahead: it waits, scheduled, with its audience frozen (started at once, the
    # server's sender would have sent it before it could be paused).
    later = datetime.now(UTC) + timedelta(hours=1)

    def campaign(audience: str, variables: dict[str, str]) -> NewCampaign:
        return NewCampaign(
            name="March open day",
            template_id="welcome",
            audience=NewCampaignAudience(tag=audience),
            variables=NewCampaignVariables.from_dict(variables),
            from_=SENDER,
            send_at=later,
        )

    made = create_campaign.sync_detailed(client=api, body=campaign(march, shared))
    created = expect(made, HTTPStatus.CREATED, CampaignEnvelope).data
    total: int = created.counts.total
    assert (created.status, total, created.counts.pending) == ("scheduled", 1, 1), created

    paused = expect(
        pause_campaign.sync_detailed(created.id, client=api), HTTPStatus.OK, CampaignEnvelope
    )
    assert paused.data.status == "paused", paused
    again = expect(
        pause_campaign.sync_detailed(created.id, client=api), HTTPStatus.CONFLICT, ErrorEnvelope
    )
    assert (again.code, "is paused" in again.error) == ("CAMPAIGN_STATE", True), again

    pending = ListCampaignRecipientsStatus.PENDING
    listed = list_campaign_recipients.sync_detailed(created.id, client=api, status=pending)
    recipients = expect(listed, HTTPStatus.OK, RecipientPageEnvelope).data
    emails: list[str] = [r.email for r in recipients.items]
    assert (emails, recipients.next_cursor) == ([ada], None), recipients

    nobody = create_campaign.sync_detailed(client=api, body=campaign(f"nobody-{tag}", shared))
    empty = expect(nobody, HTTPStatus.UNPROCESSABLE_ENTITY, RefusedEnvelope)
    assert (empty.code, isinstance(empty.data, Unset)) == ("AUDIENCE_EMPTY", True), empty
    lacking = {k: v for k, v in shared.items() if k != "contact_email"}
    short = create_campaign.sync_detailed(client=api, body=campaign(march, lacking))
    invalid = expect(short, HTTPStatus.UNPROCESSABLE_ENTITY, RefusedEnvelope)
    assert not isinstance(invalid.data, Unset), invalid
    named = [e.field for e in invalid.data.errors]
    assert (invalid.code, named) == ("VALIDATION_FAILED", ["variables.contact_email"]), invalid

    ended = expect(
        cancel_campaign.sync_detailed(created.id, client=api), HTTPStatus.OK, CampaignEnvelope
    ).data
    assert (ended.status, ended.counts.cancelled) == ("cancelled", 1), ended
    page = expect(list_campaigns.sync_detailed(client=api), HTTPStatus.OK, CampaignPageEnvelope)
    assert created.id in [c.id for c in page.data.items], page


def failure_flows(failing: AuthenticatedClient, tag: str) -> None:
    """The stand-in refuses the first message for good, then is unavailable."""
    to = f"ada-{tag}@example.com"
    plain = SendEmailRequest(to=to, subject="Hello", html="<p>Hi</p>", from_=SENDER)
    rejected = expect(
        send_email.sync_detailed(client=failing, body=plain),
        HTTPStatus.BAD_GATEWAY,
        SendRejectedEnvelope,
    )
    outcome = rejected.data
    last_error: str = outcome.last_error
    assert (rejected.code, outcome.status) == ("PROVIDER_REJECTED", "failed"), rejected
    assert "block list" in last_error, outcome

    batch = SendTemplateEmailRequest(
        to=[f"grace-{tag}@example.com"],
        template_id="welcome",
        variables=SendTemplateEmailRequestVariables.from_dict(WELCOME),
        from_=SENDER,
    )
    unavailable = expect(
        send_template_email.sync_detailed(client=failing, body=batch),
        HTTPStatus.SERVICE_UNAVAILABLE,
        TemplateSendUnavailableEnvelope,
    )
    # A 503 has the messages when the provider was away (absent when the database was).
    assert isinstance(unavailable.data, MessageList), unavailable
    statuses: list[str] = [m.status for m in unavailable.data.messages]
    assert (unavailable.code, statuses) == ("PROVIDER_UNAVAILABLE", ["failed"]), unavailable


def main(base_url: str, key: str, failing_url: str, failing_key: str) -> None:
    tag = uuid.uuid4().hex[:10]
    timeout = httpx.Timeout(30.0)

    def client(url: str, token: str) -> AuthenticatedClient:
        return AuthenticatedClient(
            base_url=url, token=token, timeout=timeout, raise_on_unexpected_status=True
        )

    with client(base_url, key) as api, client(base_url, UNKNOWN_KEY) as stranger:
        lead_flows(api, stranger, tag)
        import_flows(api, tag)
        email_flows(api, tag)
        template_flows(api, tag)
        campaign_flows(api, tag)
    with client(failing_url, failing_key) as failing:
        failure_flows(failing, tag)
    print("every flow passed")


if __name__ == "__main__":
    main(*sys.argv[1:5])
