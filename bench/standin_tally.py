"""The stand-in that counts who was delivered to, for the campaign scenarios (K1-K4).

A ``ProviderStandin`` (tests/support/standin.py) that keeps no request, only, for each
batch request it answered: when it was read (``time.monotonic()``, the clock every
process of this machine shares), how many messages it delivered and whether it was an
idempotency key's answer replayed (which delivers nothing); and how many times each
address was delivered to. ``summary()`` is what ``python -m bench.standin --tally FILE``
writes to FILE when it stops.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from tests.support.standin import Answer, ProviderStandin, RecordedRequest
from tests.support.standin_batches import recipients

TWICE_SHOWN = 20  # addresses delivered to more than once, shown by name


class TallyingStandin(ProviderStandin):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(keep_requests=False, **kwargs)
        self._tally_lock = threading.Lock()
        self._tally_delivered: Counter[str] = Counter()
        # (received_at, messages delivered, replayed, status) per batch request
        self._tally_batches: list[tuple[float, int, bool, str]] = []
        self._tally_singles = 0  # one-message requests (the API's sends, not a campaign's)

    def _record(self, request: RecordedRequest, answer: Answer | None, outcome: str) -> None:
        super()._record(request, answer, outcome)
        if not request.is_batch or request.provider is None:
            with self._tally_lock:
                self._tally_singles += 1
            return
        replayed = answer is not None and answer.replayed
        delivered: list[str] = []
        if answer is not None and outcome.startswith("2") and not replayed:
            accepted = len(answer.provider_ids)
            messages = request.json()
            # Postmark answers 200 with some messages refused; none are here (no address
            # is refused), so every message of an accepted batch was delivered.
            if accepted == len(messages):
                for message in messages:
                    delivered += recipients(request.provider, message)
        with self._tally_lock:
            self._tally_batches.append((request.received_at, len(delivered), replayed, outcome))
            self._tally_delivered.update(delivered)

    def summary(self) -> dict[str, Any]:
        with self._tally_lock:
            twice = [(a, n) for a, n in self._tally_delivered.items() if n > 1]
            return {
                "batches": [list(b) for b in sorted(self._tally_batches)],
                "single_requests": self._tally_singles,
                "distinct": len(self._tally_delivered),
                "deliveries": sum(self._tally_delivered.values()),
                "twice": len(twice),
                "twice_shown": sorted(twice)[:TWICE_SHOWN],
            }
