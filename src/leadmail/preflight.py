"""What a long-running process (`serve`, `worker`) checks before it starts, so that a bad
setting or a missing database is said in one line at the command line: inside uvicorn's
lifespan the same failure would be a logged traceback and uvicorn's own exit code.

Each check raises what the command's other paths raise for the same cause (ConfigError,
InvalidTemplate, StorageMisconfigured, StorageUnavailable, LimiterUnavailable), and
cli/failures.py words them all."""

from __future__ import annotations

from leadmail.bootstrap import catalog_from, database_from
from leadmail.config import Settings


async def check_start(settings: Settings) -> None:
    """The template catalog (read, as the start-up will), the database (opened and closed;
    migrations are the start-up's), and the Redis of LEADMAIL_REDIS_URL when set (it
    answers). The settings come first: Settings.require_for, before this."""
    catalog_from(settings).load()
    database = database_from(settings)
    async with database.running():
        pass
    if settings.redis_url:
        from leadmail.adapters.limits.redis_storage import reach  # only with Redis

        await reach(settings.redis_url)
