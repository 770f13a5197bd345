"""The campaign scenarios of issue 14 (K1-K4), each on a fresh database of its own.

K1: 5,000 leads through the Resend dialect at the default pacing (2 requests/s x 100),
``leadmail serve`` sending. K2: Postmark batches (500) with no rate, 100,000 leads (20,000
with --quick), ``leadmail serve`` sending while another account's sends are measured.
K3: ``leadmail serve --no-worker`` and two ``leadmail worker`` (Resend, a modest rate, the
stand-in slow enough that batches are at the provider when) one is killed with SIGKILL
mid-campaign and started again. K4: two workers at 10 requests/s x 10, sharing the Redis
limiter. K5: K4 with no Redis, the rate kept in the Postgres both workers share; then what
one acquire of the limiter costs on Postgres and on Redis (bench/limiter_cost.py). Each is
timed from ``POST /api/v1/campaigns`` to the poll that sees ``done``;
who was delivered to, how often, and when, is counted at the stand-in.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.moments import most_in_any

from bench.campaign_load import SendLoad, rates
from bench.campaign_rig import FINISHED, Rig, campaign_rig, other_account_key, stop_workers
from bench.common import log
from bench.cpu import rss_mb
from bench.lead_files import Sampler
from bench.limiter_cost import acquire_costs, closest_span, granted_span
from bench.scenarios import OWN_TEMPLATE_ID, TEMPLATE_ID
from leadmail.domain.pacing import email_lane

POLL_S = 0.1


@dataclass(frozen=True)
class CampaignScenario:
    id: str
    title: str
    provider: str
    leads: int
    quick_leads: int
    latency: float  # the stand-in's, s
    settings: dict[str, str]  # LEADMAIL_* without the prefix, besides the provider
    workers: int = 0  # 0: leadmail serve sends; else serve --no-worker and these
    kill: bool = False  # SIGKILL a worker once a third is sent, then start it again
    send_load: bool = False  # another account's sends measured meanwhile (K2)
    acquire_cost: bool = False  # then the limiter's cost per acquire, Postgres and Redis (K5)
    deadline_s: float = 900.0  # then the campaign is cancelled and the scenario reported
    template_id: str = TEMPLATE_ID  # OWN_TEMPLATE_ID: the account's own copy (K1a, K2a)


def campaign_scenarios(redis_url: str) -> list[CampaignScenario]:
    shared = {"REDIS_URL": redis_url}
    return [
        CampaignScenario("K1", "5,000 leads, Resend, default 2 req/s x 100", "resend",
                         5_000, 5_000, 0.05, {}, deadline_s=120),
        CampaignScenario("K2", "100,000 leads, Postmark x 500, no rate", "postmark",
                         100_000, 20_000, 0.05, {"EMAIL_RATE": "0"}, send_load=True),
        CampaignScenario("K3", "2 workers, one killed (SIGKILL) and restarted", "resend",
                         2_000, 2_000, 0.3,
                         {**shared, "EMAIL_RATE": "10", "EMAIL_BATCH": "10",
                          "CAMPAIGN_LEASE_SECONDS": "10"},
                         workers=2, kill=True, deadline_s=180),
        CampaignScenario("K4", "2 workers, Redis limiter, 10 req/s x 10", "resend",
                         2_000, 2_000, 0.05,
                         {**shared, "EMAIL_RATE": "10", "EMAIL_BATCH": "10"},
                         workers=2, deadline_s=180),
        CampaignScenario("K5", "2 workers, Postgres limiter (no Redis), 10 req/s x 10",
                         "resend", 2_000, 2_000, 0.05,
                         {"EMAIL_RATE": "10", "EMAIL_BATCH": "10"},
                         workers=2, deadline_s=180, acquire_cost=True),
        # K1 and K2 on the account's own copy of the template (issue 26).
        CampaignScenario("K1a", "K1 on an own template", "resend",
                         5_000, 5_000, 0.05, {}, deadline_s=120, template_id=OWN_TEMPLATE_ID),
        CampaignScenario("K2a", "K2 on an own template", "postmark",
                         100_000, 20_000, 0.05, {"EMAIL_RATE": "0"}, send_load=True,
                         template_id=OWN_TEMPLATE_ID),
    ]  # fmt: skip


def run_campaigns(
    selected: list[str],
    postgres_url: str,
    redis_url: str,
    env: dict[str, str],
    cpus: tuple[int, int],
    quick: bool,
) -> dict[str, Any]:
    """Each selected scenario in turn: its figures, or its error, by id."""
    found: dict[str, Any] = {}
    for scenario in campaign_scenarios(redis_url):
        if scenario.id not in selected:
            continue
        try:
            found[scenario.id] = run_one(scenario, postgres_url, redis_url, env, cpus, quick)
        except (RuntimeError, OSError, ValueError, KeyError) as e:
            log(f"{scenario.id} failed: {e}")
            found[scenario.id] = {"title": scenario.title, "error": str(e)[:2000]}
    return found


def run_one(
    s: CampaignScenario, postgres_url: str, redis_url: str, env: dict[str, str],
    cpus: tuple[int, int], quick: bool,
) -> dict[str, Any]:  # fmt: skip
    leads = s.quick_leads if quick else s.leads
    settings = {"EMAIL_PROVIDER": s.provider, **s.settings}
    log(f"{s.id} {s.title}: {leads:,} leads, stand-in {s.latency * 1000:g} ms, {settings}")
    with (
        tempfile.TemporaryDirectory(prefix=f"leadmail-bench-{s.id}-") as tmp_name,
        campaign_rig(
            postgres_url, env, Path(tmp_name), cpus=cpus, leads=leads, latency=s.latency,
            settings=settings, no_worker=s.workers > 0,
        ) as (rig, tally),
    ):  # fmt: skip
        result = drive(s, rig, env, leads)
        if s.acquire_cost:  # the campaign done, on its database
            stop_workers(rig)
            rate = int(s.settings["EMAIL_RATE"])
            result["granted"] = granted_span(rig.db_url, email_lane(s.provider), rate)
            result["acquire_cost"] = acquire_costs(rig.db_url, redis_url)
    return {**result, **delivered(s, leads, tally, result)}


def drive(s: CampaignScenario, rig: Rig, env: dict[str, str], leads: int) -> dict[str, Any]:
    """The campaign from its POST to its end; what the API and the server showed."""
    for _ in range(s.workers):
        rig.start_worker()
    load = SendLoad(rig.server.url, other_account_key(rig, env)) if s.send_load else None
    sampler = Sampler(rig.server.pid)
    sampler.start()
    if load is not None:
        load.start()
        time.sleep(3.0)  # the sends warm (connections, caches) before the baseline
    rss_before = rss_mb(rig.server.pid)
    killed_at = restarted_at = None
    with rig.client() as client:
        started = time.monotonic()
        campaign_id = rig.create_campaign(client, s.template_id)
        created_s = time.monotonic() - started
        while (campaign := rig.campaign(client, campaign_id))["status"] not in FINISHED:
            now = time.monotonic()
            if now - started > s.deadline_s:
                log(f"{s.id}: not done after {s.deadline_s:g} s, cancelled")
                rig.cancel(client, campaign_id)
            sent = campaign["counts"]["sent"]
            if s.kill and killed_at is None and sent >= campaign["counts"]["total"] // 3:
                rig.workers[0].kill()
                killed_at = now - started
                log(f"{s.id}: worker 1 killed (SIGKILL) at {killed_at:.1f} s, {sent} sent")
            if killed_at is not None and restarted_at is None and now - started > killed_at + 1:
                rig.start_worker()
                restarted_at = time.monotonic() - started
            time.sleep(POLL_S)
        ended = time.monotonic()
        failures = rig.failures(client, campaign_id) if campaign["counts"]["failed"] else []
    if load is not None:
        load.stop.set()
        load.join()
    sampler.stop.set()
    sampler.join()
    elapsed = ended - started
    result: dict[str, Any] = {
        "title": s.title,
        "provider": s.provider,
        "leads": leads,
        "stand_in_latency_ms": s.latency * 1000,
        "settings": s.settings,
        "workers": s.workers or "leadmail serve",
        "status": campaign["status"],
        "counts": campaign["counts"],
        "seconds": round(elapsed, 2),
        "post_s": round(created_s, 2),
        "recipients_per_s": round(campaign["counts"]["sent"] / elapsed, 1),
        "rss_before_mb": round(rss_before, 1),
        "rss_growth_mb": round(max(sampler.rss) - rss_before, 1),
        "error_log_lines": rig.error_lines(),
        "failed_recipients_errors": failures,
        "started_monotonic": started,
    }
    if killed_at is not None:
        result |= {
            "killed_at_s": round(killed_at, 2),
            "restarted_at_s": round(restarted_at or 0, 2),
        }
    if load is not None:
        result["sends_during"] = load.during(started, ended)
    log(f"{s.id}: {campaign['status']} in {elapsed:.1f} s, counts {campaign['counts']}")
    return result


def delivered(
    s: CampaignScenario, leads: int, tally: dict[str, Any], result: dict[str, Any]
) -> dict[str, Any]:
    """What the stand-in saw: who was delivered to, how often; requests per 1 s window."""
    if not tally:
        return {"tally": None}
    batches = tally["batches"]
    times = [b[0] for b in batches]
    rate = float(s.settings.get("EMAIL_RATE", "2" if s.provider == "resend" else "0"))
    found = {
        "delivered_distinct": tally["distinct"],
        "deliveries": tally["deliveries"],
        "delivered_twice": tally["twice"],
        "twice_shown": tally["twice_shown"],
        "exactly_once": tally["distinct"] == leads == tally["deliveries"],
        "batch_requests": len(batches),
        "replayed_requests": sum(1 for b in batches if b[2]),
        "refused_requests": sum(1 for b in batches if not b[3].startswith("2")),
        "max_requests_in_1s": most_in_any(times, 1.0),
        # Jitter after the acquire (claim, render, store) bunches requests at the stand-in
        # within a second; over longer windows the rate shows through it.
        "max_requests_in": {f"{w}s": most_in_any(times, w) for w in (1.0, 2.0, 5.0)},
        # From one request to the rate-th after it: under 1 s, a second held one too many.
        "closest_span_s": closest_span(times, int(rate)) if rate else None,
        "rate_per_s": rate or None,
        "first_request_after_s": round(times[0] - result["started_monotonic"], 2)
        if times
        else None,
        "at_standin": rates(batches),
    }
    log(
        f"{s.id}: {found['delivered_distinct']:,} delivered to, {found['delivered_twice']} twice,"
        f" {found['replayed_requests']} replayed, at most {found['max_requests_in_1s']}"
        f" requests in 1 s, {found['at_standin']['per_s']} recipients/s at the stand-in"
    )
    return found
