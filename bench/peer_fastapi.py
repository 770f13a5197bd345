"""The peer: ``POST /api/v1/leads`` written the way most teams would write it.

FastAPI, pydantic models (``EmailStr`` validation), SQLAlchemy 2 async ORM on asyncpg with
a pool of the size leadmail uses, an ``AsyncSession`` per request, a dependency that checks
the Bearer key's SHA-256 digest against the key table with one SELECT per request, an
INSERT, a commit, and the same JSON envelope. It reads and writes leadmail's own tables
(``api_keys``, ``leads``), so both do the same database work for the same request.

Nothing here is slowed down on purpose, and nothing is tuned beyond what a careful team
does by default: a sized pool, ``expire_on_commit=False``, and a ``response_model``.

    BENCH_DATABASE_URL=postgresql://... uvicorn bench.peer_fastapi:app --no-access-log
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Generic, TypeVar

from fastapi import Depends, FastAPI, HTTPException, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, EmailStr, Field
from sqlalchemy import DateTime, ForeignKey, String, Text, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from leadmail.config import Settings

T = TypeVar("T")


# The database: leadmail's tables, mapped as a team would map them.


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "accounts"

    account_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ApiKey(Base):
    __tablename__ = "api_keys"

    key_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(String(40), ForeignKey("accounts.account_id"))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Lead(Base):
    __tablename__ = "leads"

    lead_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(String(40), ForeignKey("accounts.account_id"))
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(254))
    email_key: Mapped[str] = mapped_column(String(254))
    source: Mapped[str] = mapped_column(String(100))
    note: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


def _async_url(url: str) -> str:
    return url.replace("postgresql://", "postgresql+asyncpg://", 1).replace(
        "postgres://", "postgresql+asyncpg://", 1
    )


engine = create_async_engine(
    _async_url(os.environ["BENCH_DATABASE_URL"]),
    pool_size=Settings.from_env().db_pool_max,  # leadmail's pool size, read the same way
    max_overflow=0,
)
SessionLocal = async_sessionmaker(engine, expire_on_commit=False)


# The wire.


class LeadIn(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1, max_length=200)
    email: EmailStr = Field(max_length=254)
    source: str = Field(default="", max_length=100)
    note: str = Field(default="", max_length=10_000)


class LeadOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    lead_id: str
    name: str
    email: str
    source: str
    note: str
    created_at: datetime
    updated_at: datetime


class Envelope(BaseModel, Generic[T]):
    success: bool = True
    message: str
    error: str = ""
    data: T


# Dependencies.


async def get_session() -> AsyncIterator[AsyncSession]:
    async with SessionLocal() as session:
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session)]
bearer = HTTPBearer()


async def current_account(
    credentials: Annotated[HTTPAuthorizationCredentials, Depends(bearer)],
    session: SessionDep,
) -> str:
    digest = hashlib.sha256(credentials.credentials.encode()).hexdigest()
    key = await session.scalar(
        select(ApiKey).where(ApiKey.digest == digest, ApiKey.revoked_at.is_(None))
    )
    if key is None:
        raise HTTPException(
            status_code=status.HTTP_401_UNAUTHORIZED,
            detail="The API key is not recognised",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return key.account_id


AccountDep = Annotated[str, Depends(current_account)]


# The app.


@contextlib.asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    yield
    await engine.dispose()


app = FastAPI(lifespan=lifespan)


@app.post("/api/v1/leads", response_model=Envelope[LeadOut])
async def add_lead(body: LeadIn, account_id: AccountDep, session: SessionDep) -> Envelope[LeadOut]:
    now = datetime.now(UTC)
    lead = Lead(
        lead_id="ld_" + secrets.token_urlsafe(16),
        account_id=account_id,
        name=body.name,
        email=body.email,
        email_key=body.email.lower(),
        source=body.source,
        note=body.note,
        created_at=now,
        updated_at=now,
    )
    session.add(lead)
    try:
        await session.commit()
    except IntegrityError as e:
        await session.rollback()
        raise HTTPException(status_code=status.HTTP_409_CONFLICT, detail="Lead exists") from e
    return Envelope(message="Lead added", data=LeadOut.model_validate(lead))
