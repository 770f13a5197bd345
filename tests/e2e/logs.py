"""What a running server wrote: its JSON log records, its access-log lines, and the check
that a secret is in none of it; and waiting for what happens after a response."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tests.e2e.server import LeadmailServer


def log_records(server: LeadmailServer) -> list[dict[str, Any]]:
    """Every JSON object the server wrote on stderr, one a line."""
    records: list[dict[str, Any]] = []
    for line in server.stderr().splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            record = json.loads(line)
            if isinstance(record, dict):
                records.append(record)
    return records


def access_log(
    server: LeadmailServer, request_ids: Sequence[str], timeout: float = 5.0
) -> list[dict[str, Any]]:
    """The access-log records of these requests, waiting for every one to be written
    (the line is written after the response is sent)."""
    deadline = time.monotonic() + timeout
    while True:
        records = [
            r
            for r in log_records(server)
            if r.get("event") == "request" and r.get("request_id") in request_ids
        ]
        if {r["request_id"] for r in records} >= set(request_ids):
            return records
        if time.monotonic() > deadline:
            pytest.fail(
                f"no access-log line for some of {request_ids} within {timeout} s:\n"
                f"{server.stderr()}"
            )
        time.sleep(0.05)


def wait_for(what: str, check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``check`` until it holds, failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout} s")
        time.sleep(0.05)


def assert_not_logged(server: LeadmailServer, label: str, *needles: str) -> None:
    """None of ``needles`` is in anything the server wrote (stdout and stderr)."""
    output = {"stdout": server.stdout(), "stderr": server.stderr()}
    for needle in needles:
        assert needle, f"empty needle for {label}"
        for stream, text in output.items():
            assert needle not in text, f"{label} found in the server's {stream}"
