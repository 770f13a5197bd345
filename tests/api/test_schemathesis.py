"""The OpenAPI document against the server that serves it, by schemathesis.

Every operation of the live document (/schema/openapi.json of the app on memory adapters,
as tests/api/support.py builds it), every built-in check, the positive-data acceptance
check among them ("a request the document calls valid is accepted"), with a real key. It
runs schemathesis's engine, the one behind ``st run``, called on the ASGI app directly
(``schemathesis.openapi.from_asgi``): one test for the whole document that gathers every
distinct failure of every operation into one report, rather than one pytest item per
operation that stops at its first failure.

Bounded and repeatable, for CI: a fixed seed, Hypothesis derandomized and without its
example database, no shrinking, at most MAX_EXAMPLES cases per operation and generation
mode (positive and negative); stateful testing off. 10 to 40 s, by the seed.

    .venv/bin/pytest tests/api/test_schemathesis.py

Two rules are data, not shape. An import's file is CSV whose header row names its columns
(an ``email`` column among them), which the document says in words: the harness puts a
header row (``email``) before whatever file it generated, so the generated text becomes the
file's rows (each may fail on its own; the import is taken). And a template send must give
a value for each variable of the chosen template, and which variables a template has is in
the catalog (GET
/api/v1/email/templates), not in the document (which says so in words). The harness does
what a client does: it reads the catalog and, for that one operation, fills in the chosen
template's variables with plain values (map_case, below) before the request goes. Nothing
else about the body changes: a body the document calls invalid stays invalid (the document
types ``variables`` as any string-to-string object, so no generated violation is repaired),
and every other key of ``variables`` is left as generated. Without it, a missing variable is
a 422 to a request that names a real template, which is the data-dependent rule working.

A campaign has the same rule about its template's variables (a lead of the audience may
supply one, else ``variables`` must), and one more: its ``audience`` must match a lead of
the account (422 AUDIENCE_EMPTY), which no document can say of a generated filter
(``created_after`` and ``created_before`` both 2000-01-01 match nothing). For that one
operation the harness fills the chosen template's variables as above, and an audience the
document calls valid is first read by the domain's own parser (LeadFilter.from_json: it
must take it, which is what the positive-data check would have asked of the server; any it
refuses is a failure of this test), then replaced by ``{}`` (every lead: the account holds
one, seeded before the run), so the data rule does not decide the answer. An audience the
document calls invalid is left as it is: that case stays negative.

Here, and not in tests/contract/ (one suite per port, run over every adapter): this tests
the Litestar app in-process, which is what tests/api/ does.
"""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import jsonschema
from litestar import Litestar

from leadmail.adapters.http.campaign_rules import audience_schema
from leadmail.bootstrap import Adapters
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.leads import LeadFields
from leadmail.domain.segments import LeadFilter
from tests.api.support import app_with_key
from tests.support.tools import require_module

SCHEMA_PATH = "/schema/openapi.json"
SEED = 11
MAX_EXAMPLES = 50
# Checks that must have run at least once, so a change of configuration or of schemathesis
# cannot make the test pass by checking nothing. (use_after_free and the other checks of
# sequences of calls run too, but only fire after stateful steps.)
CHECKS_THAT_MUST_RUN = frozenset(
    {
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        "positive_data_acceptance",
        "negative_data_rejection",
        "missing_required_header",
        "ignored_auth",
        "unsupported_method",
    }
)
SHOWN_PER_FAILURE = 3  # distinct answers shown for each failing check of an operation


def schemathesis_config(secret: str) -> dict[str, Any]:
    """The run's configuration, in the shape of a schemathesis.toml."""
    return {
        "seed": SEED,
        # No "max-time": with one, schemathesis repeats fuzzing until the time is up.
        "headers": {"Authorization": f"Bearer {secret}"},
        "continue-on-failure": True,
        "checks": {"enabled": True},  # every built-in check (max_response_time has no limit)
        "phases": {"stateful": {"enabled": False}},
        "generation": {
            "mode": "all",
            "max-examples": MAX_EXAMPLES,
            "no-shrink": True,
            "deterministic": True,
            "database": "none",
        },
    }


@dataclass
class Failing:
    """One check failing on one operation: how often, and the first few distinct answers."""

    message: str
    cases: int = 0
    answers: dict[str, str] = field(default_factory=dict)  # answer -> a curl reproducing it


@dataclass
class Run:
    failing: dict[str, dict[str, Failing]] = field(default_factory=lambda: defaultdict(dict))
    errors: list[str] = field(default_factory=list)
    checks_run: set[str] = field(default_factory=set)
    operations: set[str] = field(default_factory=set)
    stop_reason: str = "not finished"
    audiences: Audiences = field(default_factory=lambda: Audiences())

    def report(self) -> list[str]:
        """Every problem of the run, one paragraph per operation."""
        problems = [f"schemathesis error: {error}" for error in self.errors]
        if self.stop_reason != "completed":
            problems.append(f"the run stopped early: {self.stop_reason}")
        problems += [f"a valid audience refused: {a}" for a in self.audiences.refused[:5]]
        if not self.audiences.checked:
            problems.append("no valid campaign audience was generated to check")
        if missing := sorted(CHECKS_THAT_MUST_RUN - self.checks_run):
            problems.append(f"checks that never ran: {', '.join(missing)}")
        if self.failing:
            problems.append(
                f"{len(self.failing)} of {len(self.operations)} operations fail "
                f"(seed {SEED}, {MAX_EXAMPLES} examples per mode):"
            )
        for operation, checks in sorted(self.failing.items()):
            problems.append(operation)
            for check, failing in sorted(checks.items()):
                problems.append(f"  {check}: {failing.message} ({failing.cases} cases)")
                for answer, curl in failing.answers.items():
                    problems.append(f"    -> {answer}\n       {curl}")
        return problems


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def answer_of(recorder: Any, case_id: str) -> str:
    """The status and the first 200 characters of the answer to one case."""
    response = recorder.find_response(case_id=case_id)
    if response is None:
        return "no answer"
    body = response.content.decode("utf-8", errors="replace")
    return f"{response.status_code} {body[:200]}"


TEMPLATE_SEND = "POST /api/v1/email/template"
IMPORT = "POST /api/v1/leads/imports"
CAMPAIGN = "POST /api/v1/campaigns"
# RFC 3339's date-time (section 5.6), for the format checker: jsonschema checks the format
# only with a package this environment does not hold.
RFC3339 = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)


def is_date_time(value: object) -> bool:
    if not isinstance(value, str) or not RFC3339.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


FORMATS = jsonschema.FormatChecker()
FORMATS.checks("date-time")(is_date_time)
# The document's own audience schema, to tell a valid audience from an invalid one.
AUDIENCE = jsonschema.Draft202012Validator(audience_schema().to_schema(), format_checker=FORMATS)
HEADER_ROW = "email\r\n"


def with_header_row(body: Any) -> Any:
    """An import's file (a text/csv body, or a form's ``file``) with a header row first."""
    if isinstance(body, str):
        return HEADER_ROW + body
    if isinstance(body, bytes):
        return HEADER_ROW.encode() + body
    if isinstance(body, dict) and isinstance(body.get("file"), str | bytes):
        return {**body, "file": with_header_row(body["file"])}
    return body


@dataclass
class Audiences:
    """The valid audiences the harness read with the domain's parser, and those it refused."""

    checked: int = 0
    refused: list[str] = field(default_factory=list)


def with_campaign_data(body: Any, catalog: dict[str, tuple[str, ...]], seen: Audiences) -> Any:
    """A campaign's body with its template's variables given, and a valid audience checked
    by the domain's parser, then made ``{}`` (see the module's docstring)."""
    if not isinstance(body, dict):
        return body
    audience = body.get("audience", {})
    if isinstance(audience, dict) and AUDIENCE.is_valid(audience):
        seen.checked += 1
        try:
            LeadFilter.from_json(audience)
        except ValidationFailed as e:
            seen.refused.append(f"{audience!r}: {e.message}")
        body = {**body, "audience": {}}
    template, given = body.get("template_id"), body.get("variables", {})
    if isinstance(template, str) and template in catalog and isinstance(given, dict):
        filled = {name: f"value of {name}" for name in catalog[template]}
        body = {**body, "variables": {**given, **filled}}
    return body


def fill_template_variables(
    catalog: dict[str, tuple[str, ...]], audiences: Audiences
) -> Callable[[Any, Any], Any]:
    """The map_case hook (every phase runs it): a template send's body with a value for
    each of its template's variables, an import's file with a header row, a campaign's
    body with its data (see the module's docstring)."""

    def map_case(context: Any, case: Any) -> Any:
        body = case.body
        if context.operation is not None and context.operation.label == IMPORT:
            case.body = with_header_row(body)
            return case
        if context.operation is not None and context.operation.label == CAMPAIGN:
            case.body = with_campaign_data(body, catalog, audiences)
            return case
        if context.operation is None or context.operation.label != TEMPLATE_SEND:
            return case
        if not isinstance(body, dict) or not isinstance(template := body.get("template_id"), str):
            return case
        if template not in catalog:
            return case
        given = body.get("variables", {})
        if not isinstance(given, dict):
            return case
        filled = {name: f"value of {name}" for name in catalog[template]}
        case.body = {**body, "variables": {**given, **filled}}
        return case

    return map_case


def run_schemathesis(app: Litestar, secret: str, catalog: dict[str, tuple[str, ...]]) -> Run:
    """Every phase but the stateful one over every operation; blocks (run it in a thread)."""
    import schemathesis
    from schemathesis.engine import events, from_schema
    from schemathesis.python.asgi import shutdown_lifespans

    config = schemathesis.Config.from_dict(schemathesis_config(secret))
    run = Run()
    try:
        schema = schemathesis.openapi.from_asgi(SCHEMA_PATH, app, config=config)
        schema.hook("map_case")(fill_template_variables(catalog, run.audiences))
        for event in from_schema(schema).execute():
            if isinstance(event, events.ScenarioFinished):
                record_scenario(run, event.recorder)
            elif isinstance(event, events.NonFatalError):
                run.errors.append(f"{event.label}: {first_line(str(event.info))}")
            elif isinstance(event, events.FatalError):
                run.errors.append(f"fatal: {event.exception!r}")
            elif isinstance(event, events.EngineFinished):
                run.stop_reason = str(event.stop_reason)
                run.errors += [f"after the run: {first_line(str(f))}" for f in event.failures]
    finally:
        shutdown_lifespans()  # the app's lifespan, which from_asgi started
    return run


def record_scenario(run: Run, recorder: Any) -> None:
    run.operations.add(recorder.label)
    for case_id, checks in recorder.checks.items():
        for check in checks:
            run.checks_run.add(check.name)
            if check.failure_info is None:
                continue
            failure = check.failure_info.failure
            failing = run.failing[recorder.label].setdefault(
                check.name, Failing(f"{failure.title}: {first_line(failure.message)}")
            )
            failing.cases += 1
            answer = answer_of(recorder, case_id)
            if answer not in failing.answers and len(failing.answers) < SHOWN_PER_FAILURE:
                failing.answers[answer] = first_line(check.failure_info.code_sample)


async def test_the_document_holds_for_every_operation_and_check() -> None:
    require_module("schemathesis")
    app, services, key = await app_with_key(Adapters.in_memory())
    await services.templates.sync()  # as the app's start does; then read as a client would
    catalog = {t.template_id: t.variables for t in await services.templates.list()}
    assert catalog, "no template to send"
    # A lead, so that a campaign to every lead (``{}``) has an audience.
    await services.leads.add(key.key.account_id, LeadFields.parse(name="Seed", email="s@x.io"))

    run = await asyncio.to_thread(run_schemathesis, app, key.secret, catalog)

    problems = run.report()
    assert not problems, "\n".join(problems)
