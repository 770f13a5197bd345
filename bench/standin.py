"""The provider stand-in in a process of its own: ``python -m bench.standin --latency 0.05``.

It is the stand-in the integration tests use (tests/support/standin.py): a real HTTP/1.1
server that answers like Resend (and the other providers) after ``--latency`` seconds. It
keeps no requests (a long run would fill memory), prints ``PORT <n>`` once it listens, and
runs until SIGTERM or SIGINT, then prints ``REQUESTS <n>``. With ``--tally FILE`` it also
counts each batch request and each address delivered to (bench/standin_tally.py) and
writes that as JSON to FILE before it prints ``REQUESTS``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from tests.support.standin import ProviderStandin

from bench.standin_tally import TallyingStandin


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before answering")
    parser.add_argument("--api-key", default=None, help="refuse requests without this key")
    parser.add_argument("--tally", type=Path, default=None, help="where the tally goes")
    args = parser.parse_args()

    standin = (
        TallyingStandin(latency=args.latency, api_key=args.api_key)
        if args.tally
        else ProviderStandin(latency=args.latency, api_key=args.api_key, keep_requests=False)
    )
    standin.start()
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(f"PORT {standin.port}", flush=True)
    stop.wait()
    count = standin.request_count
    standin.close()
    if isinstance(standin, TallyingStandin) and args.tally:
        args.tally.write_text(json.dumps(standin.summary()))
    print(f"REQUESTS {count}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
