"""The garbage collector set as a long-running process wants it, once started.

A composition-root setting (HOUSE_STYLE: gc tuning stays at the edges); `leadmail serve`
and `leadmail worker` call it when ready, and bench/instructions.py as `serve` does.
"""

from __future__ import annotations

import gc

# Net allocations of container objects between two young collections (Python's default:
# 700). At 700, a send's objects (about 600) are mostly alive when one runs: each is
# traversed, promoted, and traversed again by the older generations' collections. At
# 20,000 most of them are gone before a collection comes, and the collector's share of a
# send all but disappears (bench/README.md, "Session 8"). Memory grows only by cyclic
# garbage held a little longer.
YOUNG_COLLECTION_AFTER = 20_000


def settle_collector() -> None:
    """Everything made so far lives as long as the process: moved out of the collector's
    sight, so full collections under load stay short; young collections made rarer."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_AFTER, middle, old)
