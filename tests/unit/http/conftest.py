from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.unit.http.support import Api, open_api


@pytest.fixture
async def api() -> AsyncIterator[Api]:
    async with open_api() as opened:
        yield opened
