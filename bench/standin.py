"""The provider stand-in in a process of its own: ``python -m bench.standin --latency 0.05``.

It is the stand-in the integration tests use (tests/support/standin.py): a real HTTP/1.1
server that answers like Resend (and the other providers) after ``--latency`` seconds. It
keeps no requests (a long run would fill memory), prints ``PORT <n>`` once it listens, and
runs until SIGTERM or SIGINT, then prints ``REQUESTS <n>``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from tests.support.standin import ProviderStandin


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before answering")
    parser.add_argument("--api-key", default=None, help="refuse requests without this key")
    args = parser.parse_args()

    standin = ProviderStandin(latency=args.latency, api_key=args.api_key, keep_requests=False)
    standin.start()
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(f"PORT {standin.port}", flush=True)
    stop.wait()
    count = standin.request_count
    standin.close()
    print(f"REQUESTS {count}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
