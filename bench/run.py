"""The benchmark driver.

    python -m bench.run [--quick] [--duration S] [--repeats N] [--connections 64] [--only 3,8]

One run: a fresh Postgres database (dropped at the end), migrated, an API key, the provider
stand-in in its own process, and each server as ONE process started the production way
(``leadmail serve``; uvicorn with uvloop and httptools for the ceilings and the peer)
pinned to one core, wrk to the other. Every scenario is warmed up before each measured
run, measured ``--repeats`` times in interleaved rounds so slow drift hits all alike, and
its median run reported: the table on stdout, progress on stderr, all in latest.json.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.support.network import free_port

from bench import facts, instructions
from bench.campaign_results import with_campaigns
from bench.campaigns import run_campaigns
from bench.common import ROOT, log, relative
from bench.dashboard_pages import run_dashboard, with_dashboard
from bench.database import account_with_key, fresh_database, prepare, row_counts
from bench.lead_actions import run_actions, with_actions
from bench.lead_files import run_lead_files, with_lead_files
from bench.lead_search import run_search, with_search
from bench.loadgen import LoadError
from bench.long_rows import run_long_rows, with_long_rows
from bench.measure import Bench, count_instructions, progress
from bench.message_log import run_message_log, with_message_log
from bench.options import Options, parse_args, preflight
from bench.pinning import PinnedPostgres
from bench.probes import lead_ids_file, probe
from bench.profile import render as render_profile
from bench.profile import summarize
from bench.report import render
from bench.results import Collected, assemble, write_json
from bench.retention import run_retention, with_retention
from bench.scenarios import (
    ACTIONS_ID,
    BATCH_ID,
    CAMPAIGN_IDS,
    DASHBOARD_ID,
    FILE_IDS,
    INSTR_ID,
    LEADMAIL_EXTRAS,
    LONG_ROWS_ID,
    MESSAGE_LOG_ID,
    PGBENCH_ID,
    PGBENCH_TITLE,
    RETENTION_ID,
    SCENARIOS,
    SEARCH_ID,
    SEGMENT_ID,
    Scenario,
    own_template,
)
from bench.segments import run_segments
from bench.servers import build_servers, child_env, start_servers, start_standin

# Raised by a scenario's measurement: that scenario fails, the run goes on.
MEASURE_ERRORS = (LoadError, OSError, subprocess.SubprocessError)


def run(opts: Options) -> dict[str, Any]:
    notes = preflight(opts)
    # The driver itself (probes, the 1,000-email batch) stays off the server's core.
    os.sched_setaffinity(0, {opts.load_cpu})
    started_at = datetime.now(UTC)
    git = facts.git_state()
    env = child_env()
    scenarios = [s for s in SCENARIOS if opts.selected(s.id)]
    got = Collected(runs={s.id: [] for s in scenarios})
    standin_requests: int | None = None
    lead_files: dict[str, Any] = {}
    long_rows: dict[str, Any] = {}
    message_log: dict[str, Any] = {}
    search: dict[str, Any] = {}
    actions: dict[str, Any] = {}
    retention: dict[str, Any] = {}
    dashboard: dict[str, Any] = {}
    campaigns: dict[str, Any] = {}

    local = urlsplit(opts.postgres_url).hostname in (None, "", "127.0.0.1", "localhost", "::1")
    with (
        PinnedPostgres(opts.postgres_cpu if local else None) as pinned,
        tempfile.TemporaryDirectory(prefix="leadmail-bench-") as tmp_name,
        fresh_database(opts.postgres_url) as db_url,
        contextlib.ExitStack() as stack,
    ):
        tmp = Path(tmp_name)
        if pinned.note:
            notes.append(pinned.note)
        elif pinned.pinned:
            log(f"Postgres pinned to cpu {opts.postgres_cpu} for the run")
        key, account_id, postgres_version = prepare(db_url, env)

        standin_log = stack.enter_context((tmp / "standin.log").open("w"))
        standin = start_standin(opts.load_cpu, opts.provider_latency, env, standin_log)

        def stop_standin() -> None:
            nonlocal standin_requests
            standin_requests = standin.stop()

        stack.callback(stop_standin)
        log(f"provider stand-in on {standin.url}, latency {opts.provider_latency * 1000:g} ms")

        wanted = {s.server for s in scenarios} | (
            {"leadmail"} if any(map(opts.selected, LEADMAIL_EXTRAS)) else set()
        )
        every_server = build_servers(opts.server_cpu, env, db_url, account_id, standin.url, tmp)
        servers = start_servers(every_server, wanted, stack)
        bench = Bench(opts, key, account_id, db_url, standin, servers, tmp)
        if any(s.id == "7a" for s in scenarios):  # issue 26: the account's own template
            own_template(servers["leadmail"].url, key)

        first_id = "ld_none"
        if any("{id}" in s.path for s in scenarios):
            bench.lead_ids_file, first_id = lead_ids_file(servers["leadmail"], key, tmp)
        for scenario in scenarios:
            problem = probe(scenario, servers[scenario.server], key, first_id)
            if problem is not None:
                log_tail = servers[scenario.server].log_tail(15)
                got.failures[scenario.id] = f"{problem}\n--- server log ---\n{log_tail}"
                log(f"scenario {scenario.id} skipped: {problem}")

        measure_rounds(bench, scenarios, got)
        profile(bench, [s for s in scenarios if s.id in opts.profile], got)
        if opts.selected(BATCH_ID):
            email_batches(bench, got)
        if opts.selected(INSTR_ID):
            if instructions.available():
                got.counted = count_instructions(every_server, key, tmp, opts.load_cpu)
            else:
                notes.append("valgrind not found: instructions per request (I) skipped")
        if opts.selected(PGBENCH_ID) and shutil.which("pgbench"):
            pgbench_runs(bench, got)
        # Last (100,000 leads would slow the others), each in an account of its own.
        if opts.selected(SEGMENT_ID):
            t_key, t_account = account_with_key(db_url, env, "bench-segments")
            got.segments = run_segments(servers["leadmail"].url, t_key, db_url, t_account)
        if opts.selected(MESSAGE_LOG_ID):  # two accounts of its own: 1,000,000 and 10
            big = account_with_key(db_url, env, "bench-message-log")
            small = account_with_key(db_url, env, "bench-message-log-small")
            message_log = run_message_log(servers["leadmail"].url, big, small, db_url)
        if opts.selected(SEARCH_ID):  # 1,000,000 leads in an account of its own
            q_key, q_account = account_with_key(db_url, env, "bench-search")
            search = run_search(servers["leadmail"].url, q_key, db_url, q_account)
        if opts.selected(ACTIONS_ID):  # 100,000 leads in an account of its own
            a_key, a_account = account_with_key(db_url, env, "bench-actions")
            with pinned.floating():  # the work is Postgres's: on every core, as deployed
                actions = run_actions(servers["leadmail"].url, a_key, db_url, a_account)
            if pinned.pinned:
                notes.append("BA ran with Postgres on every core (pinned again after it)")
        if files := {i for i in FILE_IDS if opts.selected(i)}:
            f_key, _ = account_with_key(db_url, env, "bench-files")
            lead_files = run_lead_files(files, servers["leadmail"], f_key)
        if opts.selected(LONG_ROWS_ID):  # after IM: its rows would slow the batches here
            l_key, _ = account_with_key(db_url, env, "bench-long-rows")
            long_rows = run_long_rows(servers["leadmail"], l_key, key, db_url)
        if opts.selected(RETENTION_ID):  # a database of its own: the purge takes all old rows
            retention = run_retention(opts.postgres_url, env)
        if opts.selected(DASHBOARD_ID):  # a database of its own: 100,000 leads in one account
            dashboard = run_dashboard(opts.postgres_url, env, tmp, free_port())
        if chosen := [i for i in CAMPAIGN_IDS if opts.selected(i)]:  # a database each
            cpus = (opts.server_cpu, opts.load_cpu)
            campaigns = run_campaigns(
                chosen, opts.postgres_url, opts.redis_url, env, cpus, opts.quick
            )

        server_facts = facts.server_facts(servers)
        rows = row_counts(db_url)

    finished_at = datetime.now(UTC)
    meta = {
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": finished_at.isoformat(timespec="seconds"),
        "git": git,
        "machine": facts.machine(postgres_version),
        "versions": facts.package_versions(),
        "settings": opts.settings(postgres_pinned=pinned.pinned),
        "servers": server_facts,
        "standin_requests": standin_requests,
        "rows_written": rows,
        "notes": notes,
    }
    report = with_lead_files(assemble(opts, scenarios, got, meta), lead_files)
    report = with_message_log(with_long_rows(report, long_rows), message_log)
    report = with_search(report, search)
    report = with_actions(report, actions)
    report = with_retention(report, retention)
    report = with_dashboard(report, dashboard)
    return with_campaigns(report, campaigns)


def measure_rounds(bench: Bench, scenarios: list[Scenario], got: Collected) -> None:
    """Interleaved rounds: every scenario once, then again, so drift hits all alike."""
    repeats = bench.opts.repeats
    for round_no in range(1, repeats + 1):
        for scenario in scenarios:
            if scenario.id in got.failures:
                continue
            try:
                result = bench.measure(scenario)
            except MEASURE_ERRORS as e:
                got.failures[scenario.id] = str(e)[:2000]
                log(f"scenario {scenario.id} failed: {e}")
                continue
            got.runs[scenario.id].append(result)
            log(progress(round_no, repeats, scenario.id, scenario.title, result))


def profile(bench: Bench, scenarios: list[Scenario], got: Collected) -> None:
    """One more run of each scenario, unmeasured, with py-spy sampling the server."""
    for scenario in scenarios:
        if scenario.id in got.failures:
            continue
        target = bench.opts.output.parent / f"profile-{scenario.id}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            result = bench.measure(scenario, profile_to=target)
        except MEASURE_ERRORS as e:
            log(f"profiling {scenario.id} failed: {e}")
            continue
        summary = summarize(target.read_text())
        got.profiles[scenario.id] = {
            "file": relative([str(target)])[0],
            "rps_while_profiled": round(result.rps, 1),
            **summary,
        }
        log(render_profile(summary, f"{scenario.id} {scenario.title}"))


def email_batches(bench: Bench, got: Collected) -> None:
    bench.email_batch()  # warm-up: connections to the stand-in, caches
    repeats = bench.opts.repeats
    for i in range(1, repeats + 1):
        batch = bench.email_batch()
        got.batches.append(batch)
        log(
            f"[{i}/{repeats}] {BATCH_ID} 1,000 template emails:"
            f" {batch['seconds']:.2f} s, {batch['sent']} sent,"
            f" {batch['failed_requests']} failed requests,"
            f" server cpu {batch['server_cpu_percent']:.0f}%"
        )


def pgbench_runs(bench: Bench, got: Collected) -> None:
    repeats = bench.opts.repeats
    for i in range(1, repeats + 1):
        try:
            result = bench.pgbench()
        except MEASURE_ERRORS as e:
            got.failures[PGBENCH_ID] = str(e)[:2000]
            log(f"pgbench failed: {e}")
            break
        got.pg_runs.append(result)
        log(progress(i, repeats, PGBENCH_ID, PGBENCH_TITLE, result))


def _interrupted(signum: int, _: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv, description=__doc__.split("\n")[0])
    # Stopped by a signal, the run still stops its servers and drops its database. SIGINT
    # too: a shell starting the run in the background would have it ignored.
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGINT, _interrupted)
    try:
        report = run(opts)
    except KeyboardInterrupt:
        log("bench: interrupted; servers stopped, database dropped")
        return 130
    print(render(report))
    write_json(report, opts.output)
    shown = opts.output.relative_to(ROOT) if opts.output.is_relative_to(ROOT) else opts.output
    log(f"wrote {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
