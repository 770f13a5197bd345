"""The collector settings `leadmail serve` and `leadmail worker` take once started."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from leadmail.collector import YOUNG_COLLECTION_AFTER, settle_collector


@pytest.fixture
def collector_restored() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


@pytest.mark.usefixtures("collector_restored")
def test_settling_freezes_what_exists_and_makes_young_collections_rarer() -> None:
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    assert gc.get_freeze_count() == 0

    settle_collector()

    assert gc.get_freeze_count() > 1000  # the modules, classes and functions loaded so far
    assert gc.get_threshold() == (YOUNG_COLLECTION_AFTER, 10, 10)
