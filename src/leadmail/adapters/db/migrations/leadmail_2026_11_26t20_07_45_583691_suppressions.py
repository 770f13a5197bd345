"""Each account's suppression list (domain/suppressions.py): one entry per address."""

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


ID = "2026-11-26T20:07:45:583691"
VERSION = "1.38.0"
DESCRIPTION = "suppressions"

# After the table (TablesThenSql): one entry per address and account (a send's lookup of
# its recipients' digests), and the newest-first listing.
INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS suppressions_digest ON suppressions (account_id, digest)",
    "CREATE INDEX IF NOT EXISTS suppressions_listing"
    " ON suppressions (account_id, created_at DESC, digest DESC)",
)
DROP_INDEXES = (
    "DROP INDEX IF EXISTS suppressions_listing",
    "DROP INDEX IF EXISTS suppressions_digest",
)


async def forwards():
    manager = TablesThenSql(
        migration_id=ID,
        app_name="leadmail",
        description=DESCRIPTION,
        sql_forwards=INDEXES,
        sql_backwards=DROP_INDEXES,
    )

    manager.add_table(
        class_name="Suppressions",
        tablename="suppressions",
        schema=None,
        columns=None,
    )

    manager.add_column(
        table_class_name="Suppressions",
        tablename="suppressions",
        column_name="suppression_id",
        db_column_name="suppression_id",
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
        table_class_name="Suppressions",
        tablename="suppressions",
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
        table_class_name="Suppressions",
        tablename="suppressions",
        column_name="digest",
        db_column_name="digest",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 71,
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
        table_class_name="Suppressions",
        tablename="suppressions",
        column_name="email",
        db_column_name="email",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 254,
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
        table_class_name="Suppressions",
        tablename="suppressions",
        column_name="reason",
        db_column_name="reason",
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

    manager.add_column(
        table_class_name="Suppressions",
        tablename="suppressions",
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

    manager.add_column(
        table_class_name="Suppressions",
        tablename="suppressions",
        column_name="message_id",
        db_column_name="message_id",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 40,
            "default": None,
            "null": True,
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
        table_class_name="Suppressions",
        tablename="suppressions",
        column_name="campaign_id",
        db_column_name="campaign_id",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 40,
            "default": None,
            "null": True,
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
