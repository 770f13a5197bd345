"""The provider stand-in in a process of its own: ``python -m bench.standin --latency 0.05``.

It is the stand-in the integration tests use (tests/support/standin.py): a real HTTP/1.1
server that answers like Resend (and the other providers) after ``--latency`` seconds. It
keeps no requests (a long run would fill memory), prints ``PORT <n>`` once it listens, and
runs until SIGTERM or SIGINT, then prints ``REQUESTS <n>``. With ``--tally`` it also counts
the recipients of every batch it accepted (an answer replayed for an idempotency key
delivers nothing) and prints ``TALLY {"delivered": ..., "distinct": ...}`` last: every
recipient delivered exactly once when both equal the audience.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections import Counter

from tests.support.standin import Answer, ProviderStandin, RecordedRequest
from tests.support.standin_batches import recipients


class TallyingStandin(ProviderStandin):
    """Counts each recipient of the batches it accepted (only their addresses are kept)."""

    def __init__(self, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.tally: Counter[str] = Counter()

    def _record(self, request: RecordedRequest, answer: Answer | None, outcome: str) -> None:
        super()._record(request, answer, outcome)
        provider = request.provider
        if answer is None or answer.replayed or not answer.provider_ids or provider is None:
            return
        data = json.loads(answer.body)
        entries = data["data"] if isinstance(data, dict) else data  # Resend's, Postmark's
        messages = request.json()
        found = Counter(
            address
            for message, entry in zip(messages, entries, strict=True)
            if entry.get("ErrorCode", 0) == 0
            for address in recipients(provider, message)
        )
        with self._lock:
            self.tally.update(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before answering")
    parser.add_argument("--api-key", default=None, help="refuse requests without this key")
    parser.add_argument("--tally", action="store_true", help="count each batch recipient")
    args = parser.parse_args()

    kind = TallyingStandin if args.tally else ProviderStandin
    standin = kind(latency=args.latency, api_key=args.api_key, keep_requests=False)
    standin.start()
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(f"PORT {standin.port}", flush=True)
    stop.wait()
    count = standin.request_count
    standin.close()
    print(f"REQUESTS {count}", flush=True)
    if isinstance(standin, TallyingStandin):
        tally = standin.tally
        found = {"delivered": sum(tally.values()), "distinct": len(tally)}
        print(f"TALLY {json.dumps(found)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
