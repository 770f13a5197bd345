"""schemathesis's engine over a whole OpenAPI document, every built-in check, one report.

The engine behind ``st run``, called on a loaded schema (an ASGI app in process, or a
running server by URL): one run for the whole document that gathers every distinct failure
of every operation into one report, rather than one pytest item per operation that stops at
its first failure. Used by tests/api/test_schemathesis.py (the app on memory adapters) and
tests/e2e/test_schemathesis_postgres.py (``leadmail serve`` on Postgres).

Bounded and repeatable, for CI: a fixed seed, Hypothesis derandomized and without its
example database, no shrinking, at most MAX_EXAMPLES cases per operation and generation
mode (positive and negative); stateful testing off.

No hook changes the shape of a request: whatever the document calls valid goes as
generated, and must be taken. Two rules are data, not shape, and a client meets them by
reading data the service holds, so the harness does what a client does, for two operations
only (map_case):

- a template send (and a campaign) must give a value for each variable of the chosen
  template, and which variables a template has is in the catalog (GET
  /api/v1/email/templates), not in the document (which says so in words): the harness
  fills in the chosen template's variables with plain values. Nothing else about the body
  changes: a body the document calls invalid stays invalid (the document types
  ``variables`` as any string-to-string object, so no generated violation is repaired),
  and every other key of ``variables`` is left as generated. Without it, a missing
  variable is a 422 to a request that names a real template: the data rule working;
- a campaign's ``audience`` must match a lead of the account (422 AUDIENCE_EMPTY), which
  no document can say of a generated filter (``created_after`` and ``created_before`` both
  2000-01-01 match nothing). An audience the document calls valid is first read by the
  domain's own parser (LeadFilter.from_json: it must take it, which is what the
  positive-data check would have asked of the server; any it refuses is a failure of the
  run), then replaced by ``{}`` (every lead: the account holds one, seeded before the
  run), so the data rule does not decide the answer. An audience the document calls
  invalid is left as it is: that case stays negative. A campaign's change (PUT) is read
  the same way: its audience, when it gives one, and, when it names a template or gives
  variables, a value for every variable of every template of the catalog (the request
  does not say which template the stored campaign holds; extra variables are taken).

That seeded lead is the harness's own data, so no generated call may remove it (a lead
read back from an answer can be named by a later call): a DELETE of its id names an id no
lead has, and an erasure (POST /api/v1/privacy/erase) of its address names another
address; and a bulk delete (POST /api/v1/leads/actions) is made a dry run (a boolean the
document allows either way). Every other lead is the run's to delete or erase.

Everything else, an import's file and every ``from`` among them, goes as generated: the
document states those rules itself.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import jsonschema
from schemathesis.config._checks import (
    NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES,
    POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES,
)

from leadmail.adapters.http.campaign_rules import audience_schema
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.segments import LeadFilter
from leadmail.domain.suppressions import suppression_address

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
TEMPLATE_SEND = "POST /api/v1/email/template"
CAMPAIGN = "POST /api/v1/campaigns"
CHANGE_CAMPAIGN = "PUT /api/v1/campaigns/{campaign_id}"
DELETE_LEAD = "DELETE /api/v1/leads/{lead_id}"
ERASE = "POST /api/v1/privacy/erase"
LEAD_ACTION = "POST /api/v1/leads/actions"
CREATE_TEMPLATE = "POST /api/v1/email/templates"
CHANGE_TEMPLATE = "PUT /api/v1/email/templates/{template_id}"
PREVIEW = "POST /api/v1/email/templates/{template_id}/preview"
TEST_SEND = "POST /api/v1/email/templates/{template_id}/test"
# Where a template's text may hold braces: in placeholders only (said in words, not in the
# schema); a layout holds {{content}} once.
TEMPLATE_TEXTS = ("subject", "html", "text")
SEED_EMAIL = "seed.lead@tests.leadmail.example"  # the lead every campaign's audience holds
NO_LEAD_ID = "ld_NoSuchLeadInTheRun000A"
NOT_THE_SEED = "someone.else@tests.leadmail.example"


def is_seed_address(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return suppression_address(value) == SEED_EMAIL
    except ValidationFailed:
        return False


def schemathesis_config(secret: str) -> dict[str, Any]:
    """The run's configuration, in the shape of a schemathesis.toml."""
    return {
        "seed": SEED,
        # No "max-time": with one, schemathesis repeats fuzzing until the time is up.
        "headers": {"Authorization": f"Bearer {secret}"},
        "continue-on-failure": True,
        "checks": {
            "enabled": True,  # every built-in check (max_response_time has no limit)
            # A request whose head passes 16 KB (a query of many long tags) is refused
            # with 431 before the app reads it (adapters/http/connections.py), whatever
            # the schema says of its values: a refusal, and documented on every operation.
            "negative_data_rejection": {
                "expected-statuses": [*NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES, "431"]
            },
            "positive_data_acceptance": {
                "expected-statuses": [*POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES, "431"]
            },
        },
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
class Audiences:
    """The valid audiences the harness read with the domain's parser, and those it refused."""

    checked: int = 0
    refused: list[str] = field(default_factory=list)


@dataclass
class Run:
    failing: dict[str, dict[str, Failing]] = field(default_factory=lambda: defaultdict(dict))
    errors: list[str] = field(default_factory=list)
    checks_run: set[str] = field(default_factory=set)
    operations: set[str] = field(default_factory=set)
    stop_reason: str = "not finished"
    audiences: Audiences = field(default_factory=Audiences)

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

Catalog = dict[str, tuple[str, ...]]  # template id -> its variables


def with_variables(body: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
    """A body naming a template of the catalog, with a value for each of its variables."""
    template, given = body.get("template_id"), body.get("variables", {})
    if isinstance(template, str) and template in catalog and isinstance(given, dict):
        filled = {name: f"value of {name}" for name in catalog[template]}
        return {**body, "variables": {**given, **filled}}
    return body


def known_template(body: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
    """A send or campaign naming a template: one of the catalog's (whose variables the
    harness knows) when it names another (one the run made, of unknown variables)."""
    template = body.get("template_id")
    if isinstance(template, str) and template not in catalog and catalog:
        return {**body, "template_id": min(catalog)}
    return body


def as_written(body: Any, *, change: bool) -> Any:
    """A template as a school writes one: braces in its text only in placeholders, a
    layout holding `{{content}}` once, `layout_id` naming no layout (the run has none it
    knows). A change leaves the texts alone (its template may be a layout, or not), and
    changes the name when nothing else is left to change."""
    if not isinstance(body, dict):
        return body
    body = {k: v for k, v in body.items() if k != "layout_id"}
    if change:
        body = {k: v for k, v in body.items() if k not in ("html", "text")}
        return body or {"name": "Renamed by the run"}
    for name in TEMPLATE_TEXTS:
        if isinstance(body.get(name), str):
            body[name] = body[name].replace("{", "").replace("}", "")
    if body.get("kind") == "layout":
        for name in ("html", "text"):
            if isinstance(body.get(name), str):
                body[name] += "{{content}}"
    return body


def checked_audience(audience: Any, seen: Audiences) -> Any:
    """An audience the document calls valid, read by the domain's parser (a refusal is a
    failure of the run), then ``{}``; any other as generated."""
    if not (isinstance(audience, dict) and AUDIENCE.is_valid(audience)):
        return audience
    seen.checked += 1
    try:
        LeadFilter.from_json(audience)
    except ValidationFailed as e:
        seen.refused.append(f"{audience!r}: {e.message}")
    return {}


def with_campaign_data(body: Any, catalog: Catalog, seen: Audiences) -> Any:
    """A campaign's body with its template's variables given, and a valid audience checked
    by the domain's parser, then made ``{}`` (see the module's docstring)."""
    if not isinstance(body, dict):
        return body
    body = {**body, "audience": checked_audience(body.get("audience", {}), seen)}
    return with_variables(body, catalog)


def with_change_data(body: Any, catalog: Catalog, seen: Audiences) -> Any:
    """A campaign change (PUT) as a client makes one: a valid audience checked and made
    ``{}``, as for a new campaign; and when it names a template or gives variables, a value
    for every variable of every template of the catalog, since which template the stored
    campaign holds is not in the request (extra variables are taken). Keys it does not give
    stay as stored."""
    if not isinstance(body, dict):
        return body
    body = known_template(body, catalog)
    if "audience" in body:
        body = {**body, "audience": checked_audience(body["audience"], seen)}
    given = body.get("variables", {})
    if ("template_id" in body or "variables" in body) and isinstance(given, dict):
        every = {name: f"value of {name}" for names in catalog.values() for name in names}
        body = {**body, "variables": {**given, **every}}
    return body


def fill_data(catalog: Catalog, run: Run, seed_lead_id: str) -> Callable[[Any, Any], Any]:
    """The map_case hook (every phase runs it): a template send's and a campaign's data, as
    a client reads it (see the module's docstring); every other request as generated."""

    def map_case(context: Any, case: Any) -> Any:
        label = context.operation.label if context.operation is not None else None
        if label == CAMPAIGN and isinstance(case.body, dict):
            body = known_template(case.body, catalog)
            case.body = with_campaign_data(body, catalog, run.audiences)
        elif label == CHANGE_CAMPAIGN and isinstance(case.body, dict):
            case.body = with_change_data(case.body, catalog, run.audiences)
        elif label == TEMPLATE_SEND and isinstance(case.body, dict):
            case.body = with_variables(known_template(case.body, catalog), catalog)
        elif label in (CREATE_TEMPLATE, CHANGE_TEMPLATE):
            case.body = as_written(case.body, change=label == CHANGE_TEMPLATE)
        elif label in (PREVIEW, TEST_SEND) and isinstance(case.body, dict):
            # A template of the catalog, with a value for each of its variables.
            named = known_template(
                {"template_id": (case.path_parameters or {}).get("template_id")}, catalog
            )["template_id"]
            if isinstance(named, str):
                case.path_parameters = {**(case.path_parameters or {}), "template_id": named}
            body = {k: v for k, v in case.body.items() if k != "variables"}
            case.body = with_variables({**body, "template_id": named}, catalog)
            case.body.pop("template_id", None)
        elif label == DELETE_LEAD and (case.path_parameters or {}).get("lead_id") == seed_lead_id:
            case.path_parameters = {**case.path_parameters, "lead_id": NO_LEAD_ID}
        elif (
            label == ERASE
            and isinstance(case.body, dict)
            and is_seed_address(case.body.get("email"))
        ):
            case.body = {**case.body, "email": NOT_THE_SEED}
        elif (
            label == LEAD_ACTION
            and isinstance(case.body, dict)
            and case.body.get("action") == "delete"
        ):
            case.body = {**case.body, "dry_run": True}  # counted, the seeded lead kept
        return case

    return map_case


def run_schemathesis(
    load: Callable[[Any], Any], secret: str, catalog: Catalog, seed_lead_id: str
) -> Run:
    """Every phase but the stateful one over every operation of the schema ``load`` returns
    (given the configuration); blocks (run it in a thread)."""
    import schemathesis
    from schemathesis.engine import events, from_schema

    config = schemathesis.Config.from_dict(schemathesis_config(secret))
    run = Run()
    schema = load(config)
    schema.hook("map_case")(fill_data(catalog, run, seed_lead_id))
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
