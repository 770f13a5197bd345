"""Piccolo tables.

Tables are built per engine by ``build_tables`` instead of being bound globally, so two
databases (say SQLite and Postgres in one test run) never share a binding. The module-level
classes below are the ones Piccolo's migration tooling reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from piccolo.columns import ForeignKey, Text, Timestamptz, Varchar
from piccolo.columns.base import OnDelete
from piccolo.engine.base import Engine
from piccolo.table import Table


@dataclass(frozen=True, slots=True)
class Tables:
    # Any: the classes are made at run time, so no static type can name their columns.
    accounts: Any
    api_keys: Any
    leads: Any


def build_tables(engine: Engine[Any] | None) -> Tables:
    class Accounts(Table, tablename="accounts", db=engine):
        account_id = Varchar(length=40, primary_key=True)
        name = Varchar(length=64, unique=True)
        created_at = Timestamptz()

    class ApiKeys(Table, tablename="api_keys", db=engine):
        key_id = Varchar(length=40, primary_key=True)
        account_id = ForeignKey(
            references=Accounts, on_delete=OnDelete.cascade, null=False, index=True
        )
        label = Varchar(length=200)
        prefix = Varchar(length=20)
        digest = Varchar(length=64, unique=True)
        created_at = Timestamptz()
        last_used_at = Timestamptz(null=True, default=None)
        revoked_at = Timestamptz(null=True, default=None)

    class Leads(Table, tablename="leads", db=engine):
        lead_id = Varchar(length=40, primary_key=True)
        account_id = ForeignKey(references=Accounts, on_delete=OnDelete.cascade, null=False)
        name = Varchar(length=200)
        email = Varchar(length=254)
        # The email as compared for uniqueness (lower-cased); unique per account via an
        # index the migration creates.
        email_key = Varchar(length=254)
        source = Varchar(length=100)
        note = Text()
        created_at = Timestamptz()
        updated_at = Timestamptz()

    return Tables(accounts=Accounts, api_keys=ApiKeys, leads=Leads)


_MIGRATION_TABLES = build_tables(None)
Accounts = _MIGRATION_TABLES.accounts
ApiKeys = _MIGRATION_TABLES.api_keys
Leads = _MIGRATION_TABLES.leads
