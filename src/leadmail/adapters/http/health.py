"""GET /health and GET /ready: for load balancers and orchestrators, without a key.

/health says the process answers, and does no I/O. /ready says whether it should be sent
traffic: the database answers, every migration is applied and the start-up work is done
(services/health.py); 503 with the reason otherwise. Left out of the OpenAPI document (the
API's clients have no use for them) and listed in the README.
"""

from __future__ import annotations

import msgspec
from litestar import Response, get
from litestar.handlers import HTTPRouteHandler

from leadmail.adapters.http.envelopes import Ok
from leadmail.adapters.http.error_table import NOT_READY
from leadmail.adapters.http.errors import envelope
from leadmail.services.health import Health

HEALTH = "/health"
READY = "/ready"


class StatusOut(msgspec.Struct):
    status: str


class StatusEnvelope(Ok):
    data: StatusOut


def health_routes(health: Health) -> list[HTTPRouteHandler]:
    @get(HEALTH, include_in_schema=False, name="health", sync_to_thread=False)
    def alive() -> StatusEnvelope:
        return StatusEnvelope.of("Alive", StatusOut("ok"))

    @get(READY, include_in_schema=False, name="ready")
    async def ready() -> Response[object]:
        reason = await health.not_ready()
        if reason is not None:
            return envelope(NOT_READY, reason, headers={"Retry-After": "1"})  # type: ignore[return-value]
        return Response(StatusEnvelope.of("Ready", StatusOut("ready")))

    return [alive, ready]
