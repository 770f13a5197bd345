"""Settings: every knob is a LEADMAIL_* environment variable with a safe default."""

from __future__ import annotations

import base64
import binascii
import math
import os
import sys
from collections.abc import Callable, Mapping
from typing import Literal

import msgspec
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_der_public_key

from leadmail.adapters.mail.providers import (
    CONSOLE,
    DIALECTS,
    PROVIDER_NAMES,
    ProviderName,
    default_rate_of,
    is_provider_name,
    max_batch_of,
)
from leadmail.domain.email import parse_sender
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.pacing import MAX_WINDOW_SECONDS, EmailPacing, windows_for
from leadmail.domain.retention import DEFAULT_RETENTION_DAYS
from leadmail.domain.unsubscribe import MIN_KEY_BYTES
from leadmail.services.outgoing import DEFAULT_CONCURRENCY

LogFormat = Literal["json", "console"]

DEFAULT_DATABASE_URL = "sqlite:///./leadmail.db"
DEFAULT_RETENTION_SCHEDULE = "17 * * * *"  # hourly, at minute 17 (UTC)
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class ConfigError(ValueError):
    """A setting has a value the service cannot use; the message names the variable."""


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    database_url: str = DEFAULT_DATABASE_URL
    host: str = "127.0.0.1"
    port: int = 8000
    log_format: LogFormat = "console"
    log_level: str = "INFO"
    db_pool_min: int = 2
    db_pool_max: int = 10
    db_connect_timeout: float = 5.0
    db_command_timeout: float = 30.0
    max_body_bytes: int = 1_048_576
    import_max_bytes: int = 52_428_800  # an import's CSV file (50 MiB)
    # Per process: connections served at once (later ones wait, unread), seconds for a
    # request's headers to arrive, seconds a request's body may stall.
    max_connections: int = 1000
    header_timeout_seconds: float = 10.0
    body_idle_seconds: float = 10.0
    migrate_on_start: bool = True
    email_provider: ProviderName = CONSOLE
    email_api_key: str = ""
    email_base_url: str = ""  # empty: the provider's public API
    email_allow_insecure: bool = False  # an http:// base URL (a local stand-in) is taken
    email_domain: str = ""  # Mailgun's sending domain
    email_timeout: float = 10.0  # seconds per attempt
    email_max_attempts: int = 4
    email_deadline: float = 20.0  # seconds for all attempts of one request
    email_default_from: str = ""
    email_concurrency: int = DEFAULT_CONCURRENCY  # messages handed to the provider at once
    email_rate: float | None = None  # requests/s across every worker; None: the provider's
    email_batch: int | None = None  # messages per batch request; None: the provider's max
    redis_url: str = ""  # the rate limiter's shared storage; empty: in this process
    rate_limit: int = 1200  # requests a minute per API key; 0: none
    metrics_token: str = ""  # GET /metrics asks for it when set (Bearer)
    processes: int = 1  # `serve`'s HTTP processes on its one port (Postgres only past 1)
    public_rate_limit: int = 120  # requests a minute per client address on /u/...; 0: none
    # How long a worker holds a campaign's batch before another may take it over (a worker
    # that stopped between the provider's call and recording its answer).
    campaign_lease_seconds: float = 60.0
    allowed_sender_domains: tuple[str, ...] = ()  # empty: any
    templates_dir: str = ""  # empty: the catalog shipped with leadmail
    key_cache_seconds: float = 300.0  # Postgres only; 0 turns the API key cache off
    # Provider webhooks (POST /api/v1/webhooks/{provider}); empty: that provider has no route.
    resend_webhook_secret: str = ""  # whsec_<base64>
    sendgrid_webhook_public_key: str = ""  # base64 DER of an ECDSA P-256 key
    mailgun_webhook_signing_key: str = ""
    postmark_webhook_auth: str = ""  # user:password, as in the webhook's URL
    # Signs unsubscribe links (>= 32 bytes); empty: a key kept in the database (SQLite,
    # and code that builds the app itself; `serve` and `worker` on Postgres require one).
    secret_key: str = ""
    public_url: str = ""  # the base of public links; empty: where `serve` listens
    # Messages (with their events) and import error rows are kept this many days; 0: kept.
    retention_days: int = DEFAULT_RETENTION_DAYS
    # When the purge runs (cron, UTC; a sixth field is seconds): hourly, at minute 17.
    retention_schedule: str = DEFAULT_RETENTION_SCHEDULE

    def __repr__(self) -> str:
        # Settings reach logs and tracebacks: never with the provider key or the DSN.
        return f"Settings(database={'sqlite' if self.is_sqlite else 'postgres'}, ...)"

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite:")

    def link_base(self) -> str:
        """The base of public links: LEADMAIL_PUBLIC_URL, else the address the server
        listens on (a loopback one when it listens on every interface)."""
        if self.public_url:
            return self.public_url
        host = self.host
        if host in ("0.0.0.0", "::", ""):  # noqa: S104 (every interface: name one)
            host = "127.0.0.1"
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def require_for(self, command: Literal["serve", "worker"]) -> None:
        """ConfigError naming the setting ``command`` cannot start without: what the email
        provider needs (require_provider); on Postgres, LEADMAIL_SECRET_KEY (every process
        must sign links alike, with a key kept out of the database), and for a worker
        LEADMAIL_PUBLIC_URL (it listens nowhere)."""
        self.require_provider()
        if self.is_sqlite:
            return
        if not self.secret_key:
            raise ConfigError(
                f"LEADMAIL_SECRET_KEY is required on Postgres for `leadmail {command}`"
                f" (at least {MIN_KEY_BYTES} bytes; it signs unsubscribe links)"
            )
        if command == "worker" and not self.public_url:
            raise ConfigError(
                "LEADMAIL_PUBLIC_URL is required on Postgres for `leadmail worker`"
                " (the base of unsubscribe links; a worker listens on no address)"
            )

    def require_provider(self) -> None:
        """ConfigError naming the setting the email provider cannot send without: the
        processes that send (`serve`, `worker`) ask; a command that sends nothing (migrate,
        keys, accounts) starts without them."""
        provider = self.email_provider
        dialect = DIALECTS.get(provider)  # what the provider needs is its dialect's to say
        if dialect is None:  # the console needs nothing
            return
        if dialect.needs_api_key and not self.email_api_key:
            raise ConfigError(f"LEADMAIL_EMAIL_API_KEY is required for the {provider} provider")
        if dialect.needs_domain and not self.email_domain:
            raise ConfigError(f"LEADMAIL_EMAIL_DOMAIN is required for the {provider} provider")
        base_url = self.email_base_url or dialect.default_base_url
        if (
            not dialect.plain_http
            and not self.email_allow_insecure
            and base_url.startswith("http://")
        ):
            # The key and every message would cross the network in clear text.
            raise ConfigError(
                f"LEADMAIL_EMAIL_BASE_URL must be https:// for the {provider} provider"
                " (set LEADMAIL_EMAIL_ALLOW_INSECURE=true for a local stand-in)"
            )

    def email_pacing(self) -> EmailPacing:
        """The rate and batch size campaigns send at: as set, else the provider's own."""
        provider = self.email_provider
        return EmailPacing(
            rate=default_rate_of(provider) if self.email_rate is None else self.email_rate,
            batch=max_batch_of(provider) if self.email_batch is None else self.email_batch,
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ

        def text(name: str, default: str) -> str:
            return env.get(f"LEADMAIL_{name}", "").strip() or default

        def number(
            name: str, default: float, kind: type[int] | type[float], *, zero: bool = False
        ) -> float:
            raw = text(name, "")
            if not raw:
                return default
            try:
                value = kind(raw)
            except ValueError as e:
                raise ConfigError(f"LEADMAIL_{name} must be a number, got {raw!r}") from e
            in_range = value >= 0 if zero else value > 0
            if not (in_range and value < math.inf):  # NaN fails this too
                kind_of = "a number >= 0" if zero else "a positive number"
                raise ConfigError(f"LEADMAIL_{name} must be {kind_of}, got {raw!r}")
            return value

        def flag(name: str, *, default: bool) -> bool:
            raw = text(name, "").lower()
            if not raw:
                return default
            if raw in ("1", "true", "yes", "on"):
                return True
            if raw in ("0", "false", "no", "off"):
                return False
            raise ConfigError(f"LEADMAIL_{name} must be true or false, got {raw!r}")

        log_format = text("LOG_FORMAT", "json" if not sys.stderr.isatty() else "console")
        if log_format not in ("json", "console"):
            raise ConfigError(
                f"LEADMAIL_LOG_FORMAT must be 'json' or 'console', got {log_format!r}"
            )
        log_level = text("LOG_LEVEL", "INFO").upper()
        if log_level not in LOG_LEVELS:
            raise ConfigError(
                f"LEADMAIL_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {log_level!r}"
            )
        database_url = text("DATABASE_URL", DEFAULT_DATABASE_URL)
        if not database_url.startswith(("sqlite:///", "postgres://", "postgresql://")):
            raise ConfigError(
                "LEADMAIL_DATABASE_URL must start with sqlite:///, postgresql:// or postgres://"
            )
        provider = text("EMAIL_PROVIDER", CONSOLE).lower()
        if not is_provider_name(provider):
            raise ConfigError(
                f"LEADMAIL_EMAIL_PROVIDER must be one of {', '.join(PROVIDER_NAMES)},"
                f" got {provider!r}"
            )
        # What the provider needs (a key, a domain, https) is checked by require_provider,
        # for the commands that send; here only each value's shape.
        api_key = text("EMAIL_API_KEY", "")  # checked as stored: blanks are no key
        base_url = text("EMAIL_BASE_URL", "").rstrip("/")
        if base_url and not base_url.startswith(("http://", "https://")):
            raise ConfigError("LEADMAIL_EMAIL_BASE_URL must start with http:// or https://")
        allow_insecure = flag("EMAIL_ALLOW_INSECURE", default=False)
        email_rate = number("EMAIL_RATE", default_rate_of(provider), float, zero=True)
        try:
            windows_for(email_rate)
        except ValueError as e:
            raise ConfigError(
                f"LEADMAIL_EMAIL_RATE must be 0 (unlimited) or at least 1/{MAX_WINDOW_SECONDS}"
                f" (one request a minute), got {text('EMAIL_RATE', '')!r}"
            ) from e
        max_batch = max_batch_of(provider)
        email_batch = int(number("EMAIL_BATCH", max_batch, int))
        if email_batch > max_batch:
            raise ConfigError(
                f"LEADMAIL_EMAIL_BATCH must be at most {max_batch}, the {provider} provider's"
                f" batch limit{' (it has no batch endpoint)' if max_batch == 1 else ''},"
                f" got {email_batch}"
            )
        redis_url = text("REDIS_URL", "")
        if redis_url and not redis_url.startswith(("redis://", "rediss://")):
            raise ConfigError("LEADMAIL_REDIS_URL must start with redis:// or rediss://")
        pool_min = int(number("DB_POOL_MIN", 2, int))
        pool_max = int(number("DB_POOL_MAX", 10, int))
        if pool_min > pool_max:
            raise ConfigError("LEADMAIL_DB_POOL_MIN must not exceed LEADMAIL_DB_POOL_MAX")
        port = int(number("PORT", 8000, int))
        if port > 65535:
            raise ConfigError(f"LEADMAIL_PORT must be at most 65535, got {port}")
        return cls(
            database_url=database_url,
            host=text("HOST", "127.0.0.1"),
            port=port,
            log_format=log_format,  # type: ignore[arg-type]
            log_level=log_level,
            db_pool_min=pool_min,
            db_pool_max=pool_max,
            db_connect_timeout=number("DB_CONNECT_TIMEOUT", 5.0, float),
            db_command_timeout=number("DB_COMMAND_TIMEOUT", 30.0, float),
            max_body_bytes=int(number("MAX_BODY_BYTES", 1_048_576, int)),
            import_max_bytes=int(number("IMPORT_MAX_BYTES", 52_428_800, int)),
            max_connections=int(number("MAX_CONNECTIONS", 1000, int)),
            header_timeout_seconds=number("HEADER_TIMEOUT_SECONDS", 10.0, float),
            body_idle_seconds=number("BODY_IDLE_SECONDS", 10.0, float),
            migrate_on_start=flag("MIGRATE_ON_START", default=True),
            rate_limit=int(number("RATE_LIMIT", 1200, int, zero=True)),
            metrics_token=text("METRICS_TOKEN", ""),
            processes=int(number("PROCESSES", 1, int)),
            public_rate_limit=int(number("PUBLIC_RATE_LIMIT", 120, int, zero=True)),
            email_provider=provider,
            email_api_key=api_key,
            email_base_url=base_url,
            email_allow_insecure=allow_insecure,
            email_domain=text("EMAIL_DOMAIN", ""),
            email_timeout=number("EMAIL_TIMEOUT", 10.0, float),
            email_max_attempts=int(number("EMAIL_MAX_ATTEMPTS", 4, int)),
            email_deadline=number("EMAIL_DEADLINE", 20.0, float),
            email_default_from=_default_sender(text("EMAIL_DEFAULT_FROM", "")),
            email_concurrency=int(number("EMAIL_CONCURRENCY", DEFAULT_CONCURRENCY, int)),
            # Unset stays None ("the provider's own", as a Settings() built in code has it).
            email_rate=email_rate if text("EMAIL_RATE", "") else None,
            email_batch=email_batch if text("EMAIL_BATCH", "") else None,
            redis_url=redis_url,
            campaign_lease_seconds=number("CAMPAIGN_LEASE_SECONDS", 60.0, float),
            allowed_sender_domains=tuple(
                d.strip().lower()
                for d in text("ALLOWED_SENDER_DOMAINS", "").split(",")
                if d.strip()
            ),
            templates_dir=text("TEMPLATES_DIR", ""),
            key_cache_seconds=number("KEY_CACHE_SECONDS", 300.0, float, zero=True),
            retention_days=int(number("RETENTION_DAYS", DEFAULT_RETENTION_DAYS, int, zero=True)),
            retention_schedule=_schedule(text("RETENTION_SCHEDULE", DEFAULT_RETENTION_SCHEDULE)),
            **_webhook_settings(text),
            **_link_settings(text),
        )


def _schedule(expression: str) -> str:
    """LEADMAIL_RETENTION_SCHEDULE: a cron expression (5 fields, or 6 with seconds)."""
    if expression == DEFAULT_RETENTION_SCHEDULE:
        return expression
    from croniter import croniter  # (70 ms to import: not for every command's default)

    if len(expression.split()) not in (5, 6) or not croniter.is_valid(expression):
        raise ConfigError(
            "LEADMAIL_RETENTION_SCHEDULE must be a cron expression of 5 fields (minute hour"
            f" day month weekday, UTC) or 6 (then seconds), e.g. '17 * * * *', got {expression!r}"
        )
    return expression


def _default_sender(raw: str) -> str:
    """LEADMAIL_EMAIL_DEFAULT_FROM, checked as a request's ``from`` is (else every send
    that relies on it would be refused, blaming the request)."""
    if raw:
        try:
            parse_sender(raw)
        except ValidationFailed as e:
            raise ConfigError(
                "LEADMAIL_EMAIL_DEFAULT_FROM must be an address such as hello@acme.example or"
                f" 'Acme Academy <hello@acme.example>', got {raw!r}, which {e.errors[0].message}"
            ) from e
    return raw


def _link_settings(text: Callable[[str, str], str]) -> dict[str, str]:
    """The unsubscribe links' key and base, checked (the key is never repeated)."""
    secret_key = text("SECRET_KEY", "")
    if secret_key and len(secret_key.encode()) < MIN_KEY_BYTES:
        raise ConfigError(
            f"LEADMAIL_SECRET_KEY must be at least {MIN_KEY_BYTES} bytes"
            f" (say, the output of: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    public_url = text("PUBLIC_URL", "").rstrip("/")
    if public_url and not public_url.startswith(("http://", "https://")):
        raise ConfigError("LEADMAIL_PUBLIC_URL must start with http:// or https://")
    return {"secret_key": secret_key, "public_url": public_url}


def _webhook_settings(text: Callable[[str, str], str]) -> dict[str, str]:
    """The providers' webhook secrets, each checked for its shape (never repeated in an
    error: only its variable is named)."""
    resend = text("RESEND_WEBHOOK_SECRET", "")
    if resend:
        try:
            secret = base64.b64decode(resend.removeprefix("whsec_") + "==")
        except binascii.Error:
            secret = b""
        if not resend.startswith("whsec_") or not secret:
            raise ConfigError(
                "LEADMAIL_RESEND_WEBHOOK_SECRET must be the webhook's signing secret, whsec_..."
            )
    sendgrid = text("SENDGRID_WEBHOOK_PUBLIC_KEY", "")
    if sendgrid:
        try:
            der = base64.b64decode(sendgrid, validate=True)
            key = load_der_public_key(der)
            key_ok = isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == "secp256r1"
        except (binascii.Error, ValueError):
            key_ok = False
        if not key_ok:
            raise ConfigError(
                "LEADMAIL_SENDGRID_WEBHOOK_PUBLIC_KEY must be the verification key SendGrid"
                " shows (base64 of an ECDSA P-256 public key)"
            )
    postmark = text("POSTMARK_WEBHOOK_AUTH", "")
    user, colon, _ = postmark.partition(":")
    if postmark and not (user and colon):
        raise ConfigError(
            "LEADMAIL_POSTMARK_WEBHOOK_AUTH must be user:password (the credentials in the"
            " webhook's URL)"
        )
    return {
        "resend_webhook_secret": resend,
        "sendgrid_webhook_public_key": sendgrid,
        "mailgun_webhook_signing_key": text("MAILGUN_WEBHOOK_SIGNING_KEY", ""),
        "postmark_webhook_auth": postmark,
    }
