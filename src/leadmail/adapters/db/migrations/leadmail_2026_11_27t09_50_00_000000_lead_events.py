"""A lead's timeline (issue 27): lead_events, the changes of a lead that leave no other
trace (updates, tag changes, imports): generated; then the index a lead's events are read
by, newest first, which the cascade of a lead's deletion uses too."""

from piccolo.columns.base import OnDelete, OnUpdate
from piccolo.columns.column_types import JSONB, BigSerial, ForeignKey, Timestamptz, Varchar
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


class Leads(Table, tablename="leads", schema=None):
    lead_id = Varchar(
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


ID = "2026-11-27T09:50:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "lead events"

INDEXES = (
    "CREATE INDEX IF NOT EXISTS lead_events_timeline"
    " ON lead_events (lead_id, at DESC, event_id DESC)",
)
DROP_INDEXES = ("DROP INDEX IF EXISTS lead_events_timeline",)


async def forwards():
    manager = TablesThenSql(
        migration_id=ID,
        app_name="leadmail",
        description=DESCRIPTION,
        sql_forwards=INDEXES,
        sql_backwards=DROP_INDEXES,
    )

    manager.add_table(
        class_name="LeadEvents",
        tablename="lead_events",
        schema=None,
        columns=None,
    )

    manager.add_column(
        table_class_name="LeadEvents",
        tablename="lead_events",
        column_name="event_id",
        db_column_name="event_id",
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
        table_class_name="LeadEvents",
        tablename="lead_events",
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
        table_class_name="LeadEvents",
        tablename="lead_events",
        column_name="lead_id",
        db_column_name="lead_id",
        column_class_name="ForeignKey",
        column_class=ForeignKey,
        params={
            "references": Leads,
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
        table_class_name="LeadEvents",
        tablename="lead_events",
        column_name="kind",
        db_column_name="kind",
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
        table_class_name="LeadEvents",
        tablename="lead_events",
        column_name="at",
        db_column_name="at",
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
        table_class_name="LeadEvents",
        tablename="lead_events",
        column_name="detail",
        db_column_name="detail",
        column_class_name="JSONB",
        column_class=JSONB,
        params={
            "default": "{}",
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
