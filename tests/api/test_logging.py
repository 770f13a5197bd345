"""One structured "request" line per request, through the production JSON set-up; never a
key, an email address or a lead id in the log."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import structlog

from leadmail import logs
from leadmail.adapters.http import errors
from leadmail.adapters.memory.keys import MemoryApiKeyStore
from leadmail.logs import configure_logging
from tests.api.support import Api, memory_with, open_api
from tests.api.test_failures import SECRET_MESSAGE, CrashingLeads
from tests.support.envelope import LEADS

ReadLog = Callable[[], list[dict[str, Any]]]
_QUIETED = ("uvicorn.access", "httpx", "httpcore", "aiosqlite", "asyncio", "piccolo")


@contextlib.contextmanager
def json_logs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, level: str = "INFO"
) -> Iterator[ReadLog]:
    """configure_logging("json") writing to the captured stderr, undone afterwards.

    configure_logging caches loggers on first use, so the module-level structlog loggers
    are swapped for fresh ones: a logger cached by an earlier test would write to a stale
    stream.
    """
    saved = structlog.get_config()
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    saved_levels = {name: logging.getLogger(name).level for name in _QUIETED}
    capsys.readouterr()
    monkeypatch.setattr(logs, "_chain", logs._chain)  # put back afterwards
    configure_logging("json", level)
    monkeypatch.setattr(errors, "log", structlog.get_logger("leadmail.http"))
    lines: list[str] = []

    def read() -> list[dict[str, Any]]:
        logs.flush_logs()  # lines are written once per turn of the event loop
        lines.extend(line for line in capsys.readouterr().err.splitlines() if line.strip())
        return [json.loads(line) for line in lines]

    try:
        yield read
    finally:
        logs.flush_logs()
        structlog.configure(**saved)
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        for name, name_level in saved_levels.items():
            logging.getLogger(name).setLevel(name_level)


def _requests(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("event") == "request"]


async def test_one_request_line_per_request_with_its_facts(
    api: Api, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    email = "secret.person@example.com"
    with json_logs(capsys, monkeypatch) as read:
        sent: list[tuple[httpx.Response, str | None, str, str]] = []

        async def call(
            method: str, path: str, route: str, *, authorised: bool = True, **kw: Any
        ) -> httpx.Response:
            headers = api.auth if authorised else {}
            response = await api.client.request(method, path, headers=headers, **kw)
            sent.append((response, api.account_id if authorised else None, method, route))
            return response

        added = await call("POST", LEADS, LEADS, json={"name": "Secret Person", "email": email})
        lead_id = added.json()["data"]["lead_id"]
        one = f"{LEADS}/{{lead_id}}"
        await call("GET", f"{LEADS}/{lead_id}", one)
        await call("GET", f"{LEADS}?email={email}", LEADS)
        await call("PUT", f"{LEADS}/{lead_id}", one, json={"email": "other.person@example.com"})
        await call("POST", LEADS, LEADS, json={"name": "X", "email": "other.person@example.com"})
        await call("POST", LEADS, LEADS, json={"name": "X", "email": "bad-address@"})
        await call("GET", f"{LEADS}/ld_missing", one)
        await call("DELETE", f"{LEADS}/{lead_id}", one)
        await call("GET", LEADS, LEADS, authorised=False)
        events = read()

    lines = _requests(events)
    assert len(lines) == len(sent)
    for line, (response, account_id, method, route) in zip(lines, sent, strict=True):
        assert line["request_id"] == response.headers["x-request-id"]
        assert line["account_id"] == account_id
        assert line["method"] == method
        assert line["route"] == route
        assert line["status"] == response.status_code
        assert isinstance(line["duration_ms"], int | float)
        assert line["duration_ms"] >= 0
        assert line["level"] == "info"
    assert [line["status"] for line in lines] == [200, 200, 200, 200, 409, 422, 404, 200, 401]


async def test_the_log_never_holds_keys_emails_or_lead_ids(
    api: Api, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    emails = ["Secret.Person@example.com", "renamed.person@example.com"]
    wrong_key = api.key.secret[:-4] + "AAAA"
    with json_logs(capsys, monkeypatch) as read:
        lead = await api.add_lead(name="Secret Person", email=emails[0])
        url = f"{LEADS}/{lead['lead_id']}"
        await api.client.get(url, headers=api.auth)
        await api.client.get(LEADS, params={"email": emails[0]}, headers=api.auth)
        await api.client.put(url, json={"email": emails[1]}, headers=api.auth)
        await api.client.post(LEADS, json={"name": "N", "email": emails[1]}, headers=api.auth)
        await api.client.get(LEADS, headers={"Authorization": f"Bearer {wrong_key}"})
        await api.client.get(LEADS, headers={"Authorization": f"Basic {api.key.secret}"})
        await api.client.delete(url, headers=api.auth)
        events = read()

    assert len(_requests(events)) == 8
    text = json.dumps(events).lower()
    for secret in (api.key.secret, wrong_key, *emails, lead["lead_id"], "secret person"):
        assert secret.lower() not in text


async def test_an_unexpected_error_is_logged_once_with_its_request_id(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_api(memory_with(leads=CrashingLeads(), keys=MemoryApiKeyStore())) as api:
        with json_logs(capsys, monkeypatch) as read:
            response = await api.client.post(
                LEADS, json={"name": "Ada", "email": "ada@example.com"}, headers=api.auth
            )
            events = read()

    request_id = response.headers["x-request-id"]
    assert response.status_code == 500
    crashes = [e for e in events if e.get("event") == "unhandled_error"]
    assert len(crashes) == 1
    assert crashes[0]["request_id"] == request_id
    assert crashes[0]["error_type"] == "RuntimeError"
    assert crashes[0]["level"] == "error"
    [line] = _requests(events)
    assert (line["request_id"], line["status"]) == (request_id, 500)
    # The exception's message may hold anything (a DSN, an address): only its type is logged.
    assert SECRET_MESSAGE not in json.dumps(events)
    assert "ada@example.com" not in json.dumps(events)


# --- the access line: the configured chain, run by RequestLog ------------------------


def test_the_access_line_has_the_shape_structlog_gives_every_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fields = {"account_id": "acc_1", "method": "POST", "route": "/x", "status": 201, "d": 1.5}
    with json_logs(capsys, monkeypatch) as read:
        token = logs.request_id_var.set("req_abc")
        try:
            logs.RequestLog("leadmail.access").info("request", **fields)
            structlog.get_logger("leadmail.other").info("request", **fields)
        finally:
            logs.request_id_var.reset(token)
        ours, structlogs = read()

    assert list(ours) == list(structlogs) == [*fields, "event", "request_id", "level", "timestamp"]
    assert {k: v for k, v in ours.items() if k != "timestamp"} == {
        k: v for k, v in structlogs.items() if k != "timestamp"
    }
    assert ours["request_id"] == "req_abc"


def test_the_access_line_obeys_the_log_level(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with json_logs(capsys, monkeypatch, "WARNING") as read:
        logs.RequestLog("leadmail.access").info("request", status=200)
        structlog.get_logger("leadmail.other").warning("shown", status=500)

    assert [line["event"] for line in read()] == ["shown"]


def test_unconfigured_the_access_line_goes_through_structlog(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(logs, "_chain", None)
    with structlog.testing.capture_logs() as captured:
        logs.RequestLog("leadmail.access").info("request", status=204)

    assert captured == [{"event": "request", "status": 204, "log_level": "info"}]


# --- the timestamp every line carries ------------------------------------------------


@pytest.mark.parametrize(
    "ns", [1_795_000_000 * 10**9, 1_795_000_000_250_000_000, 1_795_000_059_999_999_000, 7_000]
)
def test_the_timestamp_is_what_structlogs_timestamper_writes(
    monkeypatch: pytest.MonkeyPatch, ns: int
) -> None:
    # TimeStamper(fmt="iso", utc=True) writes datetime.now(UTC).isoformat() with a Z.
    monkeypatch.setattr(time, "time_ns", lambda: ns)
    moment = datetime.fromtimestamp(ns // 10**9, UTC).replace(microsecond=ns // 1000 % 10**6)
    expected = moment.isoformat().replace("+00:00", "Z")

    assert logs.add_timestamp(None, "info", {}) == {"timestamp": expected}
