"""The template catalog as ``leadmail serve`` stores and lists it: the packaged one, kept
across restarts and ``leadmail migrate``, or a directory of one's own in its place."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import Any

from tests.e2e.cli import cli_env, run_cli
from tests.e2e.keys import create_keys
from tests.e2e.logs import assert_not_logged
from tests.e2e.mail import SENDER, delivered, email_env, provider_api_key
from tests.e2e.names import new_name
from tests.e2e.server import running_server, server_with_key
from tests.support.catalog import PLACEHOLDER
from tests.support.envelope import TEMPLATE, TEMPLATES, assert_error, ok_data
from tests.support.standin import provider_standin


@dataclass(frozen=True)
class TemplateFile:
    template_id: str
    name: str
    subject: str
    body: str

    @property
    def variables(self) -> set[str]:
        return set(PLACEHOLDER.findall(self.subject + self.body))


def read_template_file(text: str) -> TemplateFile:
    """A template file as documented: a ``---`` header of ``key: value`` lines, the body."""
    head, _, body = text.partition("\n---\n")
    lines = head.splitlines()
    assert lines[0] == "---", text[:80]
    header = dict(line.split(":", 1) for line in lines[1:] if line.strip())
    fields = {key.strip(): value.strip() for key, value in header.items()}
    return TemplateFile(fields["id"], fields["name"], fields["subject"], body)


def packaged_catalog() -> dict[str, TemplateFile]:
    found = [
        read_template_file(entry.read_text(encoding="utf-8"))
        for entry in files("leadmail.templates").iterdir()
        if entry.name.endswith(".html")
    ]
    return {t.template_id: t for t in found}


def check_listing(listed: list[dict[str, Any]], expected: dict[str, TemplateFile]) -> None:
    assert sorted(t["id"] for t in listed) == sorted(expected)
    for template in listed:
        source = expected[template["id"]]
        assert template["name"] == source.name
        assert template["subject"] == source.subject
        assert template["body"].strip() == source.body.strip()
        assert set(template["variables"]) == source.variables, template["id"]
        assert len(template["variables"]) == len(source.variables), template["variables"]
        created = datetime.fromisoformat(template["created_at"].replace("Z", "+00:00"))
        assert created.utcoffset() == timedelta(0), template["created_at"]
        assert created <= datetime.now(UTC)


def test_the_packaged_catalog_is_listed_and_kept_across_restarts(
    own_database_url: str, tmp_path: Path
) -> None:
    catalog = packaged_catalog()
    assert len(catalog) >= 7, catalog.keys()
    [key] = create_keys(own_database_url, tmp_path, new_name("templates"))

    with running_server(own_database_url, tmp_path, name="first") as first:
        with first.client(key.secret) as api:
            listed = ok_data(api.get(TEMPLATES))
            alias = ok_data(api.get(TEMPLATE))
        first.stop_gracefully()
    check_listing(listed, catalog)
    assert alias == listed

    migrated = run_cli(["migrate"], cli_env(own_database_url), tmp_path)
    assert migrated.returncode == 0, migrated.describe()
    assert f"Templates in the catalog: {len(catalog)}" in migrated.stdout, migrated.describe()

    with running_server(own_database_url, tmp_path, name="second") as second:
        with second.client(key.secret) as api:
            again = ok_data(api.get(TEMPLATES))
        second.stop_gracefully()
    check_listing(again, catalog)
    assert {t["id"]: t["created_at"] for t in again} == {
        t["id"]: t["created_at"] for t in listed
    }, "a restart or `leadmail migrate` gave templates a new created_at"
    assert again == listed


OPEN_DAY = """\
---
id: open-day
name: Open day invitation
subject: {{first_name}}, join our open day on {{date}}
---
<html><body>
<p>Hi {{ first_name }},</p>
<p>Our open day is on {{date}} at <strong>{{place}}</strong>.</p>
</body></html>
"""


def test_a_templates_dir_replaces_the_catalog_and_its_template_can_be_sent(
    tmp_path: Path,
) -> None:
    catalog_dir = tmp_path / "catalog"
    catalog_dir.mkdir()
    (catalog_dir / "open-day.html").write_text(OPEN_DAY, encoding="utf-8")
    (catalog_dir / "notes.txt").write_text("not a template", encoding="utf-8")
    own_database_url = f"sqlite:///{tmp_path / 'leadmail.db'}"
    # First the packaged catalog is stored, as an earlier version of the service would have.
    migrated = run_cli(["migrate"], cli_env(own_database_url), tmp_path)
    assert migrated.returncode == 0, migrated.describe()
    assert f"Templates in the catalog: {len(packaged_catalog())}" in migrated.stdout

    api_key = provider_api_key("resend")
    with provider_standin(api_key=api_key) as standin:
        env = email_env(
            "resend", standin.url, api_key, TEMPLATES_DIR=str(catalog_dir), EMAIL_MAX_ATTEMPTS="1"
        )
        with server_with_key(own_database_url, tmp_path, extra_env=env, name="custom") as server:
            assert server.primary is not None
            first_name = f"<b>Zoë</b> & {uuid.uuid4().hex[:6]}"
            recipient = f"open-day-{uuid.uuid4().hex[:8]}@example.com"
            with server.client(server.primary.secret) as api:
                listed = ok_data(api.get(TEMPLATES))
                sent = ok_data(
                    api.post(
                        TEMPLATE,
                        json={
                            "to": [recipient],
                            "template_id": "open-day",
                            "variables": {
                                "first_name": first_name,
                                "date": "1 May",
                                "place": "Room <3>",
                            },
                            "from": SENDER,
                        },
                    )
                )
                gone = api.post(
                    TEMPLATE,
                    json={
                        "to": [recipient],
                        "template_id": "welcome",
                        "variables": {"first_name": "Ada"},
                        "from": SENDER,
                    },
                )
            assert_error(gone, 404, "TEMPLATE_NOT_FOUND")
            [request] = standin.requests
            assert_not_logged(server, "the provider API key", api_key)

    check_listing(listed, {"open-day": read_template_file(OPEN_DAY)})
    [message] = sent["messages"]
    assert message["status"] == "sent"
    assert message["template_id"] == "open-day"
    assert message["provider_message_id"] == request.provider_id
    got = delivered(request)
    assert got.to == (recipient,)
    assert got.subject == f"{first_name}, join our open day on 1 May"
    assert "<p>Hi &lt;b&gt;Zoë&lt;/b&gt; &amp; " in got.html, got.html
    assert "<strong>Room &lt;3&gt;</strong>" in got.html, got.html
    assert "{{" not in got.html
