"""Every curl example of README.md, taken from the README itself and run by the real
``curl`` in ``bash`` against the real ``leadmail serve``, started as ``make run`` starts it
(a fresh SQLite file, the console provider), whose first-start demo key stands for
``lm_...``. Each answers success, or the status the README shows under it (``# 202
{...}``), with the envelope's ``message`` the README shows; so an example that stops
working, and every new one, fails here. An id the README writes as ``ld_...``,
``imp_...``, ``msg_...``, ``cmp_...`` or ``act_...`` is the one the latest answer holding one
gave."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e.readme import Example, Shown, examples
from tests.e2e.server import LeadmailServer, running_server, wait_for_stdout

README = Path(__file__).resolve().parents[2] / "README.md"
CURL_TIMEOUT_S = 30
# The README's server and placeholders.
_HOST = re.compile(r"(?:https?://)?(?:localhost|127\.0\.0\.1):8000\b")
_PLACEHOLDER = re.compile(r"\b(lm|ld|imp|msg|cmp|act)_\.\.\.")
_ID = re.compile(r'"(?:id|lead_id)":\s*"((ld|imp|msg|cmp|act)_[A-Za-z0-9_-]+)"')
_BEARER = re.compile(r"Bearer (lm_[^\s'\"]+)")
_STATUS_LINE = re.compile(r"^HTTP/[\d.]+ (\d{3})", re.MULTILINE)
# Each example's curl writes its answer's headers here, for its status.
_CURL = 'curl() { command curl --show-error --max-time %d --dump-header "$README_HEADERS" "$@"; }\n'
# `leads.csv`, which the import example sends (the README shows none): students the
# campaign example's audience selects, and one row that fails.
STUDENTS = 6
LEADS_CSV = (
    "email,name,tags\r\n"
    + "".join(f"student{n}@example.com,Student {n},interested:python\r\n" for n in range(STUDENTS))
    + "not-an-email,Nobody,\r\n"
)


@dataclass
class Run:
    """The examples so far: the variables they set and the ids their answers gave."""

    server: LeadmailServer
    workdir: Path
    values: dict[str, str]
    variables: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def substituted(self, text: str) -> str:
        def value(found: re.Match[str]) -> str:
            if found[1] not in self.values:
                raise LookupError(f"no answer has given an id for {found[0]} yet")
            return self.values[found[1]]

        return _PLACEHOLDER.sub(value, _HOST.sub(self.server.base_url, text))

    def run(self, example: Example) -> None:
        try:
            text = self.substituted(example.text)
        except LookupError as e:
            self.problems.append(f"README line {example.line}: {e}")
            return
        assigned = example.assignments
        if assigned is not None:
            self.variables.update({k: self.substituted(v) for k, v in assigned.items()})
            return
        headers = self.workdir / "headers.txt"
        headers.unlink(missing_ok=True)
        done = subprocess.run(
            ["bash", "-c", (_CURL % CURL_TIMEOUT_S) + text],
            env=self._env(headers),
            cwd=self.workdir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CURL_TIMEOUT_S + 10,
            check=False,
        )
        said = f"README line {example.line}: {example.text}\n"
        if done.returncode != 0:
            self.problems.append(f"{said}exited {done.returncode}: {done.stderr}")
            return
        if example.is_curl:
            self._check(example.shown, headers.read_text(), done.stdout, said)

    def _env(self, headers: Path) -> dict[str, str]:
        kept = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
        return {**kept, **self.variables, "README_HEADERS": str(headers), "NO_PROXY": "*"}

    def _check(self, shown: Shown, headers: str, body: str, said: str) -> None:
        status = int(_STATUS_LINE.findall(headers)[-1])
        expected = shown.status or 200
        if status != expected:
            self.problems.append(f"{said}answered {status}, not {expected}: {body}")
            return
        if "application/json" not in headers.lower():
            return
        answer = json.loads(body)
        success = shown.success if shown.success is not None else status < 400
        if answer.get("success") is not success:
            self.problems.append(f"{said}answered {body}")
        if shown.message is not None and answer.get("message") != shown.message:
            self.problems.append(f"{said}said {answer.get('message')!r}, not {shown.message!r}")
        for found, kind in reversed(_ID.findall(body)):  # the first of each kind wins
            self.values[kind] = found


def test_the_readme_shows_its_examples_to_the_extraction() -> None:
    found = list(examples(README.read_text(encoding="utf-8")))

    curls = [e for e in found if e.is_curl]
    assert len(curls) >= 20, [e.text for e in found]
    assert any(e.shown.status == 202 for e in curls)  # the import's


def test_the_extraction_reads_commands_as_a_shell_would() -> None:
    markdown = "\n".join([
        "Text `curl` in prose.",
        "```bash",
        "KEY=lm_...   # a comment",
        "# heading",
        "curl -s localhost:8000/a \\",
        "  -d '{\"x\": 1,",
        "       \"y\": 2}'",
        '# 201 {"success":true,"message":"Made","error":""}',
        "",
        "curl -s localhost:8000/b",
        '# data: {"items": [{"message": "not the envelope\'s"}]}',
        "```",
        "```python",
        "curl = 1",
        "```",
        "```console",
        "$ curl -s localhost:8000/c \\",
        "    -X DELETE",
        '{"success":false,"message":"Gone"}',
        "```",
    ])  # fmt: skip

    found = list(examples(markdown))

    assert [(e.line, e.text) for e in found] == [
        (3, "KEY=lm_...   # a comment"),
        (5, 'curl -s localhost:8000/a \\\n  -d \'{"x": 1,\n       "y": 2}\''),
        (10, "curl -s localhost:8000/b"),
        (17, "curl -s localhost:8000/c \\\n    -X DELETE"),
    ]
    assert found[0].assignments == {"KEY": "lm_..."}
    assert found[1].words[-1] == '{"x": 1,\n       "y": 2}'
    assert [e.shown for e in found] == [Shown(), Shown(201, True, "Made"), Shown(), Shown()]


@pytest.mark.skipif(shutil.which("curl") is None and not os.environ.get("CI"), reason="no curl")
def test_every_curl_example_of_the_readme_answers_as_it_shows(tmp_path: Path) -> None:
    (tmp_path / "leads.csv").write_text(LEADS_CSV, encoding="utf-8")
    database_url = f"sqlite:///{tmp_path / 'leadmail.db'}"
    # One request a second: the campaign example's pause finds the campaign still sending.
    with running_server(database_url, tmp_path, {"LEADMAIL_EMAIL_RATE": "1"}) as server:
        [key] = set(_BEARER.findall(wait_for_stdout(server, "Bearer")))
        run = Run(server, tmp_path, {"lm": key})
        found = list(examples(README.read_text(encoding="utf-8")))
        for example in found:
            run.run(example)
        server.stop_gracefully()

    if run.problems:
        pytest.fail("\n\n".join(run.problems), pytrace=False)
    assert {"ld", "imp", "msg", "cmp", "act"} <= set(run.values)
    assert (tmp_path / "leads.csv").read_text().startswith("email,name,source,note,phone,tags")
