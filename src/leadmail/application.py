"""The whole service as one ASGI app: the adapters opened in its lifespan, the start-up
work done once the database is ready (at once, or once `leadmail migrate` has run), the
job worker run, and the HTTP adapter built on the services (bootstrap.py wires them)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from importlib.metadata import version
from typing import TYPE_CHECKING

import structlog

from leadmail.adapters.mail.providers import PROVIDER_NAMES
from leadmail.background import running_jobs
from leadmail.bootstrap import Adapters, wire
from leadmail.config import Settings
from leadmail.logs import logs_written
from leadmail.services.health import Health
from leadmail.services.registry import Services

if TYPE_CHECKING:  # the web framework is imported by the commands that serve, not by all
    from litestar import Litestar

log = structlog.get_logger("leadmail")


@contextlib.asynccontextmanager
async def start_when_ready(
    health: Health, started: Callable[[], contextlib.AbstractAsyncContextManager[None]]
) -> AsyncIterator[None]:
    """Yields at once; in the background, waits until the storage is ready, then enters
    ``started`` and stays in it until the exit (which leaves it, or stops the waiting)."""
    stopping = asyncio.Event()

    async def start() -> None:
        await health.wait_for_storage()
        try:
            async with started():
                log.info("database_ready")
                await stopping.wait()
        except Exception:
            log.exception("start_up_failed")  # /ready stays 503 and says "starting"
            raise

    task = asyncio.create_task(start())
    try:
        yield
    finally:
        if health.started:
            stopping.set()
        else:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task  # (a failure was logged when it happened)


def create_app(
    settings: Settings,
    adapters: Adapters | None = None,
    *,
    on_ready: Callable[[Services], contextlib.AbstractAsyncContextManager[None]] | None = None,
    run_jobs: bool = True,
) -> Litestar:
    """The whole service as one ASGI app; adapters open in its lifespan (``run_jobs``: a worker)."""
    from leadmail.adapters.http.app import build_app
    from leadmail.adapters.http.webhooks.routes import webhook_verifiers

    adapters = adapters if adapters is not None else Adapters.from_settings(settings, serving=True)
    services = wire(adapters, settings)

    @contextlib.asynccontextmanager
    async def started() -> AsyncIterator[None]:
        """The start-up work, on a database whose migrations are applied; the API is
        served from then on."""
        count = await services.templates.sync()
        log.info("templates_synced", templates=count)
        # The links' key made (and kept) on the first start, not by the first send.
        await services.unsubscribes.ready()
        await services.sign_in.ready()  # the dashboard's form key, likewise
        if adapters.provider.name == "console":
            log.warning(
                "console_email_provider",
                detail="LEADMAIL_EMAIL_PROVIDER is console: emails are logged, NOT delivered",
            )
        shared = adapters.database is not None and adapters.database.kind == "postgres"
        jobs = running_jobs(adapters.jobs, services, shared=shared) if run_jobs else None
        ready = on_ready(services) if on_ready else contextlib.nullcontext()
        async with jobs or contextlib.nullcontext(), ready:
            services.health.mark_started()
            yield

    @contextlib.asynccontextmanager
    async def lifespan(_: Litestar) -> AsyncIterator[None]:
        async with adapters.opened(apply_migrations=settings.migrate_on_start):
            health = services.health
            waiting = None if settings.migrate_on_start else await health.storage_not_ready()
            if waiting is None:
                async with started():
                    yield
            else:
                # LEADMAIL_MIGRATE_ON_START=false on a database lacking migrations: serve
                # /health and /ready (503) at once, and start once `leadmail migrate` ran.
                log.warning("waiting_for_database", reason=waiting)
                async with start_when_ready(health, started):
                    yield

    return build_app(
        services,
        key_budget=adapters.key_budget,
        client_budget=adapters.client_budget,
        metrics_token=settings.metrics_token,
        secure_cookies=settings.link_base().startswith("https://"),
        version=version("leadmail"),
        max_body_bytes=settings.max_body_bytes,
        import_max_bytes=settings.import_max_bytes,
        sender_required=not settings.email_default_from,
        # Stored messages name the provider that took them: any known one, or this one.
        providers=sorted({*PROVIDER_NAMES, adapters.provider.name}),
        lifespan=[logs_written, lifespan],
        webhooks=webhook_verifiers(
            resend_secret=settings.resend_webhook_secret,
            sendgrid_public_key=settings.sendgrid_webhook_public_key,
            mailgun_signing_key=settings.mailgun_webhook_signing_key,
            postmark_auth=settings.postmark_webhook_auth,
        ),
    )
