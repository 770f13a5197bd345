"""Sender domains (the domains an account may send from): the table (generated), then the
index that makes a domain unique within an account."""

from piccolo.columns.base import OnDelete, OnUpdate
from piccolo.columns.column_types import BigSerial, ForeignKey, Timestamptz, Varchar
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.columns.indexes import IndexMethod
from piccolo.table import Table

from leadmail.adapters.db.raw_migration import TablesThenSql


class Accounts(Table, tablename="accounts", schema=None):
    account_id = Varchar(
        length=40,
        default="",
        null=False,
        primary_key=True,
        unique=False,
        index=False,
        index_method=IndexMethod.btree,
        choices=None,
        db_column_name=None,
        secret=False,
    )


ID = "2026-11-26T20:11:36:728110"
VERSION = "1.38.0"
DESCRIPTION = "sender domains"

# After the table (TablesThenSql): one row per account and domain (the adapter's upsert
# target), which also serves reading an account's domains.
INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS sender_domains_account_domain"
    " ON sender_domains (account_id, domain)",
)
DROP_INDEXES = ("DROP INDEX IF EXISTS sender_domains_account_domain",)


async def forwards():
    manager = TablesThenSql(
        migration_id=ID,
        app_name="leadmail",
        description=DESCRIPTION,
        sql_forwards=INDEXES,
        sql_backwards=DROP_INDEXES,
    )

    manager.add_table(
        class_name="SenderDomains",
        tablename="sender_domains",
        schema=None,
        columns=None,
    )

    manager.add_column(
        table_class_name="SenderDomains",
        tablename="sender_domains",
        column_name="sender_domain_id",
        db_column_name="sender_domain_id",
        column_class_name="BigSerial",
        column_class=BigSerial,
        params={
            "null": False,
            "primary_key": True,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="SenderDomains",
        tablename="sender_domains",
        column_name="account_id",
        db_column_name="account_id",
        column_class_name="ForeignKey",
        column_class=ForeignKey,
        params={
            "references": Accounts,
            "on_delete": OnDelete.cascade,
            "on_update": OnUpdate.cascade,
            "target_column": None,
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="SenderDomains",
        tablename="sender_domains",
        column_name="domain",
        db_column_name="domain",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 253,
            "default": "",
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="SenderDomains",
        tablename="sender_domains",
        column_name="created_at",
        db_column_name="created_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": TimestamptzNow(),
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    return manager
