"""Request budgets asked before a request is served: each API key's own
(LEADMAIL_RATE_LIMIT a minute) and, on the public unsubscribe pages, each client
address's (LEADMAIL_PUBLIC_RATE_LIMIT). Not charged: /health, /ready, the document, and
the providers' webhooks (bursts of thousands from a few addresses; their signature is the
gate).

The answer says the budget in ``RateLimit-Limit``, ``RateLimit-Remaining`` and
``RateLimit-Reset`` (tracing.py adds them to whatever is answered, a 429 included);
over it, 429 ``RATE_LIMITED`` with ``Retry-After``, and nothing is done. When the shared
storage (Redis) cannot be reached the request is served uncounted: a limiter that fails
must not take the API down with it; the log says so, at most every 10 s.
"""

from __future__ import annotations

import time
from typing import Any

import structlog
from litestar import Request

from leadmail.adapters.http.tracing import RESPONSE_HEADERS
from leadmail.domain.keys import Principal
from leadmail.ports.rate_limits import LimiterUnavailable
from leadmail.ports.request_limits import RateLimited, RequestLimiter

log = structlog.get_logger("leadmail.http")
_QUIET_S = 10.0


class RequestBudgets:
    def __init__(
        self,
        per_key: RequestLimiter | None,
        per_client: RequestLimiter | None,
        public_prefixes: tuple[str, ...],
    ) -> None:
        """``None``: that budget is off. ``public_prefixes``: the paths charged per client
        address (no key there)."""
        self._per_key = per_key
        self._per_client = per_client
        self._public = public_prefixes
        self._warned_at = -_QUIET_S

    async def charge(self, request: Request[Any, Any, Any]) -> None:
        """Count this request on its bucket; raises RateLimited when over the budget.
        Runs after authentication (a key's budget is its own)."""
        scope = request.scope
        user = scope.get("user")
        if isinstance(user, Principal):
            limiter, bucket, per = self._per_key, f"key:{user.key_id}", "for this API key"
        elif scope["path"].startswith(self._public):
            client = scope.get("client")
            address = client[0] if client else "unknown"
            limiter, bucket, per = self._per_client, f"client:{address}", "from your address"
        else:
            return
        if limiter is None:
            return
        try:
            allowance = await limiter.hit(bucket)
        except LimiterUnavailable as e:
            now = time.monotonic()
            if now - self._warned_at >= _QUIET_S:
                self._warned_at = now
                log.warning("request_limiter_unavailable", detail=e.message)
            return
        scope["state"].setdefault(RESPONSE_HEADERS, []).extend(
            (name.encode(), value.encode()) for name, value in allowance.headers()
        )
        if not allowance.allowed:
            raise RateLimited(allowance, per)
