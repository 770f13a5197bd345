"""The lead every POST /leads of the benchmark sends, in all its drivers (bench.run's
probes and warm-up, bench.instructions' in-process requests; wrk's Lua scripts write the
same fields)."""

from __future__ import annotations

from typing import Any


def lead_body(token: str) -> dict[str, Any]:
    return {
        "name": "Bench Lead",
        "email": f"lead-{token}@example.com",
        "source": "bench",
        "note": "Asked about evening classes",
    }
