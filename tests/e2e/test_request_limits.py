"""Request budgets on the real servers: two `leadmail serve` processes on one Postgres and
one Redis share each key's budget (LEADMAIL_REDIS_URL); a key's 429 leaves another key's
budget alone; the shared servers of the suite answer with the default budget's headers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.keys import create_keys
from tests.e2e.names import new_name
from tests.e2e.server import LeadmailServer, running_server
from tests.postgres import fresh_migrated_database
from tests.support.envelope import LEADS, assert_error

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

BUDGET = 5


@pytest.fixture
async def migrated_database(postgres_server: str) -> AsyncIterator[str]:
    async with fresh_migrated_database(postgres_server) as url:
        yield url


async def test_two_servers_on_one_redis_share_a_keys_budget(
    migrated_database: str, redis_url: str, tmp_path: Path
) -> None:
    [key, other] = create_keys(migrated_database, tmp_path, new_name("shared-budget"), count=2)
    env = {"LEADMAIL_REDIS_URL": redis_url, "LEADMAIL_RATE_LIMIT": str(BUDGET)}
    with (
        running_server(migrated_database, tmp_path, env, name="one") as one,
        running_server(migrated_database, tmp_path, env, name="two") as two,
        one.client(key.secret) as first,
        two.client(key.secret) as second,
    ):
        answers = [(first if n % 2 else second).get(LEADS) for n in range(BUDGET + 2)]
        with one.client(other.secret) as third:
            others = third.get(LEADS)

    assert [a.status_code for a in answers] == [200] * BUDGET + [429, 429]
    remaining = [a.headers["ratelimit-remaining"] for a in answers]
    assert remaining == ["4", "3", "2", "1", "0", "0", "0"]
    assert {a.headers["ratelimit-limit"] for a in answers} == {str(BUDGET)}
    refused = assert_error(answers[-1], 429, "RATE_LIMITED")
    assert f"More than {BUDGET} requests a minute" in refused["error"]
    assert int(answers[-1].headers["retry-after"]) >= 1
    # The same account's other key has a budget of its own.
    assert others.status_code == 200
    assert others.headers["ratelimit-remaining"] == str(BUDGET - 1)


def test_a_server_answers_with_the_default_budget(server: LeadmailServer) -> None:
    assert server.primary is not None
    with server.client(server.primary.secret) as api:
        answer = api.get(LEADS)

    assert answer.status_code == 200
    assert answer.headers["ratelimit-limit"] == "1200"
    assert 0 <= int(answer.headers["ratelimit-remaining"]) < 1200
