"""The figures of every request (tracing.py records each one as it logs it), for GET
/metrics (metrics.py). Apart from the route's module: tracing.py comes before the app's
other modules."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

REQUESTS = Counter(
    "leadmail_http_requests",
    "HTTP requests answered, by route template, method and status",
    ["route", "method", "status"],
)
REQUEST_SECONDS = Histogram(
    "leadmail_http_request_duration_seconds",
    "Time from a request's start to its answer's end, by route template and method",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)


# Each (route, method, status)'s two series, found once: labels() costs twice the
# counting itself (bench/README.md, issue 28). Routes are templates, so this stays small.
_SERIES: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}


def record_request(route: str, method: str, status: int, seconds: float) -> None:
    """One request answered (tracing.py calls it for every request, as it logs it)."""
    series = _SERIES.get((route, method, status))
    if series is None:
        series = _SERIES[(route, method, status)] = (
            REQUESTS.labels(route, method, str(status)),
            REQUEST_SECONDS.labels(route, method),
        )
    series[0].inc()
    series[1].observe(seconds)
