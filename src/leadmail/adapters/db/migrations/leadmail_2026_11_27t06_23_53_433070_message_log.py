"""The message log, listed (issue 27): the campaign a message was sent for, and
message_addresses (each address a message went to): generated; then the listing's
indexes, and the addresses of the messages already stored."""

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


ID = "2026-11-27T06:23:53:433070"
VERSION = "1.38.0"
DESCRIPTION = "message log listing"

# After the tables (TablesThenSql): the account's messages newest first; of one template,
# of one campaign (partial: a plain send makes no entry in either); and by address.
INDEXES = (
    "CREATE INDEX IF NOT EXISTS messages_log"
    " ON messages (account_id, created_at DESC, message_id DESC)",
    "CREATE INDEX IF NOT EXISTS messages_log_template"
    " ON messages (account_id, template_id, created_at DESC, message_id DESC)"
    " WHERE template_id IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS messages_log_campaign"
    " ON messages (account_id, campaign_id, created_at DESC, message_id DESC)"
    " WHERE campaign_id IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS message_addresses_log"
    " ON message_addresses (account_id, address, created_at DESC, message_id DESC)",
)
# Each stored message's recipients ('"Name" <address>' or 'address', one '<' at most), the
# address case-folded: lower() folds every letter on Postgres, ASCII on SQLite (as
# domain/addresses.email_key does, but for non-ASCII letters on SQLite).
_ADDRESS = "CASE WHEN {r} LIKE '%>' THEN substr({r}, {at} + 1, length({r}) - {at} - 1) ELSE {r} END"
BACKFILL = {
    "postgres": (
        "INSERT INTO message_addresses (account_id, address, created_at, message_id)"
        " SELECT DISTINCT m.account_id, lower("
        + _ADDRESS.format(r="r.value", at="strpos(r.value, '<')")
        + "), m.created_at, m.message_id"
        " FROM messages AS m, jsonb_array_elements_text(m.recipients::jsonb) AS r(value)",
    ),
    "sqlite": (
        "INSERT INTO message_addresses (account_id, address, created_at, message_id)"
        " SELECT DISTINCT m.account_id, lower("
        + _ADDRESS.format(r="r.value", at="instr(r.value, '<')")
        + "), m.created_at, m.message_id"
        " FROM messages AS m, json_each(m.recipients) AS r",
    ),
}
DROP_INDEXES = (
    "DROP INDEX IF EXISTS message_addresses_log",
    "DROP INDEX IF EXISTS messages_log_campaign",
    "DROP INDEX IF EXISTS messages_log_template",
    "DROP INDEX IF EXISTS messages_log",
)


async def forwards():
    manager = TablesThenSql(
        migration_id=ID,
        app_name="leadmail",
        description=DESCRIPTION,
        sql_forwards=INDEXES,
        sql_backwards=DROP_INDEXES,
        sql_forwards_by_kind=BACKFILL,
    )

    manager.add_table(
        class_name="MessageAddresses",
        tablename="message_addresses",
        schema=None,
        columns=None,
    )

    manager.add_column(
        table_class_name="MessageAddresses",
        tablename="message_addresses",
        column_name="address_row",
        db_column_name="address_row",
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
        table_class_name="MessageAddresses",
        tablename="message_addresses",
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
        table_class_name="MessageAddresses",
        tablename="message_addresses",
        column_name="address",
        db_column_name="address",
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
        table_class_name="MessageAddresses",
        tablename="message_addresses",
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
        table_class_name="MessageAddresses",
        tablename="message_addresses",
        column_name="message_id",
        db_column_name="message_id",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 40,
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
        table_class_name="Messages",
        tablename="messages",
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
