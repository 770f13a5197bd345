"""The campaign scenarios (K1-K5) in the report: their figures under ``campaigns``, their
checks (issue 14's targets) in the checks table, and their lines in the printed report."""

from __future__ import annotations

from typing import Any

K1_SECONDS = 30.0
K2_RATE = 1_000.0  # recipients/s, overall and in the slowest tenth
K2_RSS_MB = 100.0
K2_P99_MS = 250.0


def _check(
    cid: str, title: str, value: float | None, unit: str, target: str, met: bool | None
) -> dict[str, Any]:
    return {"id": cid, "title": title, "value": value, "unit": unit, "target": target,
            "met": None if value is None else met}  # fmt: skip


def campaign_checks(found: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for sid, k in found.items():
        if "error" in k or not k.get("tally", True):
            out.append(_check(sid, f"{k['title'][:30]}: no figures", None, "", "", None))
            continue
        leads = k["leads"]
        done = k["status"] == "done"
        out.append(_check(f"{sid} once", f"delivered once each, of {leads:,} (done)",
                          k["delivered_distinct"], "", f"= {leads:,}",
                          k["exactly_once"] and done))  # fmt: skip
        out.append(_check(f"{sid} twice", "addresses delivered more than once",
                          k["delivered_twice"], "", "= 0", k["delivered_twice"] == 0))  # fmt: skip
        if sid == "K1":
            out.append(_check("K1 time", "POST to done, 5,000 at 2 req/s x 100",
                              k["seconds"], " s", f"<= {K1_SECONDS:g} s",
                              k["seconds"] <= K1_SECONDS))  # fmt: skip
        if sid == "K2":
            stand = k["at_standin"]
            # Nothing delivered (the deadline passed first) is a rate of 0, not no figure.
            overall, slowest = stand["per_s"] or 0.0, stand["slowest_tenth_per_s"] or 0.0
            sends = k.get("sends_during") or {}
            p99 = sends.get("p99_ms")
            out += [
                _check("K2 rate", "recipients/s at the stand-in, overall", overall, "/s",
                       f">= {K2_RATE:,.0f}/s", overall is not None and overall >= K2_RATE),
                _check("K2 slowest", "the same, its slowest tenth", slowest, "/s",
                       f">= {K2_RATE:,.0f}/s", slowest is not None and slowest >= K2_RATE),
                _check("K2 POST..done", "recipients/s, POST to done (context)",
                       k["recipients_per_s"], "/s", "", None),
                _check("K2 RSS", "server RSS growth during it", k["rss_growth_mb"], " MB",
                       f"<= {K2_RSS_MB:g} MB", k["rss_growth_mb"] <= K2_RSS_MB),
                _check("K2 p99", "p99 of another account's sends meanwhile", p99, " ms",
                       f"<= {K2_P99_MS:g} ms", p99 is not None and p99 <= K2_P99_MS),
            ]  # fmt: skip
        if rate := k["rate_per_s"]:  # the figure of K4; context elsewhere
            most, judged = k["max_requests_in_1s"], sid in ("K4", "K5")
            out.append(_check(f"{sid} 1 s", f"most requests in any 1 s (rate {rate:g}/s)",
                              most, "", f"<= {rate:g}" if judged else "",
                              most <= rate if judged else None))  # fmt: skip
            in5 = k["max_requests_in"]["5.0s"]
            out.append(_check(f"{sid} 5 s", f"most requests in any 5 s (rate x 5: {5 * rate:g})",
                              in5, "", "", None))  # fmt: skip
        if sid in ("K1a", "K2a") and sid[:2] in found and "error" not in found[sid[:2]]:
            out.append(_own_template_check(sid, k, found[sid[:2]]))
        if sid == "K3":
            out.append(_check("K3 replayed", "batches sent again, answered by their key",
                              k["replayed_requests"], "", "", None))  # fmt: skip
    return out


def _own_template_check(sid: str, own: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """Issue 26: a campaign on an account's own template against the same on a predefined
    one, in the same run: K1 by its time (POST to done), K2 by its rate at the stand-in."""
    if sid == "K1a":
        ratio = base["seconds"] / own["seconds"] if own["seconds"] else None
        what = "time on a predefined template / on an own one"
    else:
        mine, theirs = own["at_standin"]["per_s"], base["at_standin"]["per_s"]
        ratio = mine / theirs if mine and theirs else None
        what = "rate on an own template / on a predefined one"
    return _check(f"{sid} vs {sid[:2]}", what, ratio, "x", ">= 0.95",
                  ratio is not None and ratio >= 0.95)  # fmt: skip


def with_campaigns(report: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    if not found:
        return report
    report["campaigns"] = found
    report["checks"] += campaign_checks(found)
    return report


def render_campaigns(report: dict[str, Any]) -> list[str]:
    lines = []
    for sid, k in (report.get("campaigns") or {}).items():
        if "error" in k:
            lines.append(f"{sid} {k['title']}: FAILED: {k['error'].splitlines()[0][:100]}")
            continue
        stand = k.get("at_standin") or {}
        line = (
            f"{sid} {k['title']}: {k['status']} in {k['seconds']:.1f} s (POST {k['post_s']:.1f} s),"
            f" {k['counts']['sent']:,} sent; stand-in: {k.get('delivered_distinct', 0):,}"
            f" delivered to, {k.get('delivered_twice')} twice, {k.get('batch_requests')}"
            f" requests ({k.get('replayed_requests')} replayed), {stand.get('per_s')}"
            f" recipients/s (slowest tenth {stand.get('slowest_tenth_per_s')}), at most"
            f" {k.get('max_requests_in_1s')} requests in 1 s; RSS +{k['rss_growth_mb']} MB"
        )
        if (sends := k.get("sends_during")) is not None:
            line += (
                f"; sends meanwhile: {sends['requests']} ({sends['per_s']}/s), p50"
                f" {sends['p50_ms']} ms, p99 {sends['p99_ms']} ms, errors {sends['errors']}"
            )
        if "killed_at_s" in k:
            line += f"; worker killed at {k['killed_at_s']} s, restarted {k['restarted_at_s']} s"
        lines.append(line)
        if (granted := k.get("granted")) is not None:
            lines.append(
                f"{sid} rate + 1 requests spanned at least {k.get('closest_span_s')} s at the"
                f" stand-in, {granted['closest_span_s']} s as Postgres granted them"
                f" ({granted['grants']} grants)"
            )
        for name, cost in (k.get("acquire_cost") or {}).items():
            if name == "error":
                lines.append(f"{sid} acquire costs: FAILED: {cost[:100]}")
                continue
            seq, top, quiet = cost["sequential"], cost["one_lane_ceiling"], cost["quiet"]
            lines.append(
                f"{sid} one acquire on {name}, quiet lanes: p50 {quiet['p50_us']} us, CPU"
                f" {quiet['driver_cpu_us_per_acquire']} us the driver's +"
                f" {quiet['storage_cpu_us_per_acquire']} us {name}'s; a busy lane (~1 s of grants):"
                f" p50 {seq['p50_us']} us, p99 {seq['p99_us']} us,"
                f" CPU {seq['driver_cpu_us_per_acquire']} us the driver's +"
                f" {seq['storage_cpu_us_per_acquire']} us {name}'s; one lane's ceiling"
                f" {top['per_s']:,}/s ({top['tasks']} tasks)"
            )
    return ["campaigns (issue 14):", *(f"  {line}" for line in lines)] if lines else []
