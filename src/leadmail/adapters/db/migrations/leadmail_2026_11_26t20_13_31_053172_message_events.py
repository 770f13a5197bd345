"""Provider events of messages (webhooks): the table (generated), then its indexes and the
one that finds a message by its provider's id."""

from piccolo.columns.base import OnDelete, OnUpdate
from piccolo.columns.column_types import BigSerial, ForeignKey, Text, Timestamptz, Varchar
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


class Messages(Table, tablename="messages", schema=None):
    message_id = Varchar(
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


ID = "2026-11-26T20:13:31:053172"
VERSION = "1.38.0"
DESCRIPTION = "message events"


# After the tables (TablesThenSql): what Piccolo's column options cannot express.
INDEXES = (
    # Each event once per provider: the conflict target of the insert that applies it.
    "CREATE UNIQUE INDEX IF NOT EXISTS message_events_provider_event"
    " ON message_events (provider, event_id)",
    # A message's events, oldest first (and the cascade when a message is deleted).
    "CREATE INDEX IF NOT EXISTS message_events_message"
    " ON message_events (message_id, at, event_row)",
    # A webhook finds its message by the provider's id; only sent messages have one.
    "CREATE INDEX IF NOT EXISTS messages_provider_message"
    " ON messages (provider_message_id) WHERE provider_message_id IS NOT NULL",
)
DROP_INDEXES = (
    "DROP INDEX IF EXISTS messages_provider_message",
    "DROP INDEX IF EXISTS message_events_message",
    "DROP INDEX IF EXISTS message_events_provider_event",
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
        class_name="MessageEvents",
        tablename="message_events",
        schema=None,
        columns=None,
    )

    manager.add_column(
        table_class_name="MessageEvents",
        tablename="message_events",
        column_name="event_row",
        db_column_name="event_row",
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
        table_class_name="MessageEvents",
        tablename="message_events",
        column_name="message_id",
        db_column_name="message_id",
        column_class_name="ForeignKey",
        column_class=ForeignKey,
        params={
            "references": Messages,
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
        table_class_name="MessageEvents",
        tablename="message_events",
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
        table_class_name="MessageEvents",
        tablename="message_events",
        column_name="provider",
        db_column_name="provider",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 32,
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
        table_class_name="MessageEvents",
        tablename="message_events",
        column_name="event_id",
        db_column_name="event_id",
        column_class_name="Text",
        column_class=Text,
        params={
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
        table_class_name="MessageEvents",
        tablename="message_events",
        column_name="type",
        db_column_name="type",
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
        table_class_name="MessageEvents",
        tablename="message_events",
        column_name="bounce",
        db_column_name="bounce",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 8,
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
        table_class_name="MessageEvents",
        tablename="message_events",
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
        table_class_name="MessageEvents",
        tablename="message_events",
        column_name="detail",
        db_column_name="detail",
        column_class_name="Text",
        column_class=Text,
        params={
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
