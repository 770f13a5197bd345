"""The progress bar of a long command run in this process (an import, a bulk action):
tqdm on stderr, made at the first report (when the total is known), with the rate and
the time left."""

from __future__ import annotations

import sys
from typing import Never

from tqdm import tqdm


class Bar:
    """``show(done, total)`` at each report; ``close()`` at the end, whatever happened."""

    def __init__(self, unit: str) -> None:
        self._unit = unit
        self._bar: tqdm[Never] | None = None

    def show(self, done: int, total: int | None) -> None:
        bar = self._bar
        if bar is None:
            bar = self._bar = tqdm(
                total=total, unit=f" {self._unit}", file=sys.stderr, dynamic_ncols=True
            )
        bar.update(done - bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
