"""GET /metrics: Prometheus's text format (prometheus-client).

Requests by route template, method and status, with their latency; the providers' figures
(adapters/mail/metrics.py) and the database pool's (adapters/db/pool.py) are in the same
registry; the campaign recipients pending and the jobs queued are read from the storage at
each scrape (services/operations.py). With several processes (`serve --processes N`) every
process writes its figures to PROMETHEUS_MULTIPROC_DIR and the answer adds them up,
whichever process answers. With LEADMAIL_METRICS_TOKEN set, the scrape must send it as
``Authorization: Bearer <token>`` (compared in constant time); no API key, no budget.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterator
from typing import Any

from litestar import Request, Response, get
from litestar.handlers import HTTPRouteHandler
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from leadmail.adapters.http.error_table import BY_CLASS
from leadmail.adapters.http.errors import BEARER_CHALLENGE, envelope
from leadmail.domain.errors import Unauthorized
from leadmail.services.operations import OperationFigures, Operations

METRICS = "/metrics"
# The text format every Prometheus reads (Litestar adds the charset).
TEXT_FORMAT = "text/plain; version=0.0.4"
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"


class _Figures(Collector):
    """The storage's figures of one scrape."""

    def __init__(self, figures: OperationFigures) -> None:
        self._figures = figures

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "leadmail_campaign_recipients_pending",
            "Recipients the running campaigns have still to send",
            value=self._figures.pending_recipients,
        )
        yield GaugeMetricFamily(
            "leadmail_jobs_queued",
            "Jobs waiting in the queue (imports, bulk actions, campaigns)",
            value=self._figures.queued_jobs,
        )


def _exposition(figures: OperationFigures) -> bytes:
    if os.environ.get(MULTIPROCESS_DIR):
        processes = CollectorRegistry()
        MultiProcessCollector(processes)  # type: ignore[no-untyped-call]  # every process's files
        kept = generate_latest(processes)
    else:
        kept = generate_latest(REGISTRY)
    scraped = CollectorRegistry()
    scraped.register(_Figures(figures))
    return kept + generate_latest(scraped)


def _bearer(request: Request[Any, Any, Any]) -> str:
    for name, value in request.scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""


def metrics_routes(operations: Operations, token: str = "") -> list[HTTPRouteHandler]:
    @get(METRICS, include_in_schema=False, name="metrics")
    async def metrics(request: Request[Any, Any, Any]) -> Response[object]:
        if token and not hmac.compare_digest(_bearer(request).encode(), token.encode()):
            return envelope(  # type: ignore[return-value]
                BY_CLASS[Unauthorized],
                "GET /metrics needs the metrics token: 'Authorization: Bearer <token>'",
                headers=BEARER_CHALLENGE,
            )
        body = _exposition(await operations.figures())
        return Response(body, media_type=TEXT_FORMAT)

    return [metrics]
