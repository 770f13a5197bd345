"""Daily send quotas (issue 28): accounts.daily_quota, account_sends (one row per account
and UTC day with the messages counted) and campaigns.paused_reason (a campaign paused by
its quota resumes by itself): generated; then the unique index the count's upsert takes
its conflict from."""

from piccolo.columns.base import OnDelete, OnUpdate
from piccolo.columns.column_types import ForeignKey, Integer, Varchar
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


ID = "2026-11-27T16:05:34:701009"
VERSION = "1.38.0"
DESCRIPTION = "daily quotas"

INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS account_sends_day ON account_sends (account_id, day)",
)
DROP_INDEXES = ("DROP INDEX IF EXISTS account_sends_day",)


async def forwards():
    manager = TablesThenSql(
        migration_id=ID,
        app_name="leadmail",
        description=DESCRIPTION,
        sql_forwards=INDEXES,
        sql_backwards=DROP_INDEXES,
    )

    manager.add_table(
        class_name="AccountSends",
        tablename="account_sends",
        schema=None,
        columns=None,
    )

    manager.add_column(
        table_class_name="AccountSends",
        tablename="account_sends",
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
        table_class_name="AccountSends",
        tablename="account_sends",
        column_name="day",
        db_column_name="day",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 10,
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
        table_class_name="AccountSends",
        tablename="account_sends",
        column_name="sent",
        db_column_name="sent",
        column_class_name="Integer",
        column_class=Integer,
        params={
            "default": 0,
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
        table_class_name="Accounts",
        tablename="accounts",
        column_name="daily_quota",
        db_column_name="daily_quota",
        column_class_name="Integer",
        column_class=Integer,
        params={
            "default": 0,
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="paused_reason",
        db_column_name="paused_reason",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 16,
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

    return manager
