"""What ``leadmail serve`` writes: one JSON access line per request, and no secrets."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from tests.e2e.keys import IssuedKey
from tests.e2e.logs import access_log, log_records
from tests.e2e.names import new_email
from tests.e2e.server import LeadmailServer, server_with_key
from tests.support.envelope import LEADS, ok_data


def request_id(tag: str) -> str:
    return f"e2e-{tag}-{uuid.uuid4().hex[:12]}"


def test_one_access_line_per_request_and_no_secrets(
    server: LeadmailServer, primary_key: IssuedKey
) -> None:
    email, new_address = new_email("logged"), new_email("changed")
    ids = {name: request_id(name) for name in ("add", "read", "find", "update", "anon", "nope")}
    with server.client(primary_key.secret) as api:
        added = api.post(
            LEADS, json={"name": "Log Me", "email": email}, headers={"X-Request-ID": ids["add"]}
        )
        lead_id = ok_data(added)["lead_id"]
        responses = {
            "add": added,
            "read": api.get(f"{LEADS}/{lead_id}", headers={"X-Request-ID": ids["read"]}),
            "find": api.get(LEADS, params={"email": email}, headers={"X-Request-ID": ids["find"]}),
            "update": api.put(
                f"{LEADS}/{lead_id}",
                json={"email": new_address},
                headers={"X-Request-ID": ids["update"]},
            ),
            "nope": api.get("/api/v1/nowhere", headers={"X-Request-ID": ids["nope"]}),
        }
        minted = api.get(LEADS)  # no X-Request-ID: the server makes one
        insane = api.get(LEADS, headers={"X-Request-ID": "not a sane id!"})
    with server.client() as anonymous:
        responses["anon"] = anonymous.get(LEADS, headers={"X-Request-ID": ids["anon"]})

    for name, response in responses.items():
        assert response.headers.get("x-request-id") == ids[name], (name, response.headers)
    assert minted.headers.get("x-request-id"), minted.headers
    assert minted.headers["x-request-id"] not in ids.values()
    assert insane.headers.get("x-request-id"), insane.headers
    assert insane.headers["x-request-id"] != "not a sane id!"
    assert insane.headers["x-request-id"] != minted.headers["x-request-id"]

    records = access_log(server, list(ids.values()))
    by_id: dict[str, dict[str, object]] = {}
    for record in records:
        assert record["request_id"] not in by_id, f"two access lines for {record}"
        by_id[str(record["request_id"])] = record
    expected = {
        "add": ("POST", 200),
        "read": ("GET", 200),
        "find": ("GET", 200),
        "update": ("PUT", 200),
        "nope": ("GET", 404),
        "anon": ("GET", 401),
    }
    for name, (method, status) in expected.items():
        record = by_id[ids[name]]
        assert {"request_id", "account_id", "method", "route", "status", "duration_ms"} <= set(
            record
        ), record
        assert record["method"] == method, record
        assert record["status"] == status == responses[name].status_code, record
        duration = record["duration_ms"]
        assert isinstance(duration, int | float), record
        assert duration >= 0, record
        assert isinstance(record["route"], str), record
        assert record["route"], record
        assert lead_id not in str(record["route"]), record  # the template, not the path
    account = by_id[ids["add"]]["account_id"]
    assert isinstance(account, str), by_id[ids["add"]]
    assert account, by_id[ids["add"]]
    assert all(by_id[ids[n]]["account_id"] == account for n in ("read", "find", "update"))
    assert by_id[ids["anon"]]["account_id"] is None
    assert by_id[ids["add"]]["route"] == by_id[ids["find"]]["route"]
    assert by_id[ids["read"]]["route"] == by_id[ids["update"]]["route"]
    assert by_id[ids["read"]]["route"] != by_id[ids["add"]]["route"]

    stdout, stderr = server.stdout(), server.stderr()
    # With LEADMAIL_LOG_FORMAT=json every line on stderr is one JSON object, library lines too.
    for line in stderr.splitlines():
        if line.strip():
            assert isinstance(json.loads(line), dict), line
    # Nothing to print: on SQLite a key existed before `serve`; on Postgres there is never
    # a demo key, though this server started on an empty database.
    assert stdout == "", stdout
    for label, forbidden in [
        ("database URL", server.database_url),
        ("lead email", email),
        ("updated lead email", new_address),
        *(("API key", secret) for secret in server.secrets),
    ]:
        assert forbidden.lower() not in stderr.lower(), f"{label} in stderr"
        assert forbidden.lower() not in stdout.lower(), f"{label} in stdout"


def test_sigterm_right_after_a_request_loses_no_line(tmp_path: Path) -> None:
    # Info lines are held a moment to be written together (logs.LineBuffer), and the
    # process ends right after uvicorn's shutdown. Every line, the last request's access
    # line and uvicorn's own last words included, must be out.
    database_url = f"sqlite:///{tmp_path / 'leadmail.db'}"
    with server_with_key(database_url, tmp_path) as server:
        assert server.primary is not None
        rid = request_id("last")
        with server.client(server.primary.secret) as api:
            api.get(LEADS, headers={"X-Request-ID": rid})
        server.stop_gracefully()  # at once: no waiting for the line
        records = log_records(server)
    assert [r["status"] for r in records if r.get("request_id") == rid] == [200]
    events = [r.get("event") for r in records]
    assert "Application shutdown complete." in events, server.stderr()
    assert any(str(e).startswith("Finished server process") for e in events), server.stderr()
