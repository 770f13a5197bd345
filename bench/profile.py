"""Where a server's time goes: py-spy samples summed up.

``python -m bench.run --profile 3`` records py-spy (raw format: one line per distinct
stack, root first, then the number of samples) during an extra, unmeasured run of each
scenario named, and keeps the file as bench/results/profile-<id>.txt. This module reads
such a file:

    python -m bench.profile bench/results/profile-3.txt
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path
from typing import Any

# A sample is charged to the first category matched walking from the innermost frame
# outwards, so the standard library (re, datetime, contextlib) is charged to its caller.
CATEGORIES: list[tuple[str, tuple[str, ...]]] = [
    ("logging: structlog, access log line", ("structlog/", "/logging/")),
    ("asyncpg: driver, protocol, pool", ("asyncpg/",)),
    ("Piccolo: query building, rows", ("piccolo/",)),
    ("httpx/httpcore: provider calls", ("httpx/", "httpcore/", "anyio/", "h11/")),
    ("email-validator", ("email_validator/",)),
    ("leadmail domain: rules, validation", ("leadmail/domain/",)),
    ("leadmail services", ("leadmail/services/",)),
    ("leadmail adapters: HTTP, DB, mail", ("leadmail/adapters/",)),
    ("Litestar: routing, DI, body, response", ("litestar/",)),
    ("uvicorn + httptools: HTTP protocol", ("uvicorn/", "httptools/")),
    ("FastAPI/Starlette/pydantic", ("fastapi/", "starlette/", "pydantic/", "pydantic_core/")),
    ("SQLAlchemy", ("sqlalchemy/",)),
    ("json / msgspec", ("/json/", "msgspec/")),
    ("event loop: asyncio, uvloop, I/O in C", ("asyncio/", "uvloop/")),
]
OTHER = "other"
NO_FRAME = "no Python frame (C code outside any call)"
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def parse_frame(frame: str) -> tuple[str, str]:
    """``"Query._run (piccolo/query/base.py:184)"`` -> ("Query._run", "piccolo/query/base.py")"""
    match = _FRAME.match(frame)
    if match is None:
        return frame, ""
    return match["function"], match["file"]


def category(frames: list[tuple[str, str]]) -> str:
    for _, path in reversed(frames):
        for name, markers in CATEGORIES:
            if any(marker in path for marker in markers):
                return name
    return OTHER


def _short(function: str, path: str) -> str:
    tail = path.split("site-packages/")[-1].split("/src/")[-1]
    return f"{function} ({tail})"


def summarize(raw: str, top: int = 15) -> dict[str, Any]:
    """Shares (percent of the samples) by category, by innermost function (self time), and
    the inclusive shares of leadmail's own functions."""
    total = 0
    by_category: collections.Counter[str] = collections.Counter()
    by_self: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    for line in raw.split("\n"):  # not splitlines(): frames may hold \x0c and the like
        stack, _, count = line.rstrip().rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        total += n
        if not stack:  # running, but no Python frame on the stack: C code
            by_category[NO_FRAME] += n
            by_self[NO_FRAME] += n
            continue
        frames = [parse_frame(f) for f in stack.split(";")]
        by_category[category(frames)] += n
        by_self[_short(*frames[-1])] += n
        seen = set()
        for function, path in frames:
            if "leadmail/" in path and "bench/" not in path:
                name = _short(function, path)
                if name not in seen:
                    seen.add(name)
                    inclusive[name] += n

    def shares(counter: collections.Counter[str], limit: int | None) -> list[list[Any]]:
        return [[name, round(100 * n / total, 1)] for name, n in counter.most_common(limit)]

    if not total:
        return {"samples": 0, "categories": [], "self": [], "leadmail_inclusive": []}
    return {
        "samples": total,
        "categories": shares(by_category, None),
        "self": shares(by_self, top),
        "leadmail_inclusive": shares(inclusive, top),
    }


def render(summary: dict[str, Any], title: str = "") -> str:
    lines = [f"profile{' of ' + title if title else ''}: {summary['samples']} samples"]
    for heading, key in (
        ("where the time goes (innermost matching frame)", "categories"),
        ("self time (innermost function)", "self"),
        ("leadmail functions, inclusive", "leadmail_inclusive"),
    ):
        lines.append(f"  {heading}:")
        lines.extend(f"    {share:5.1f}%  {name}" for name, share in summary[key])
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m bench.profile PROFILE.txt", file=sys.stderr)
        return 2
    print(render(summarize(Path(argv[0]).read_text()), argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
