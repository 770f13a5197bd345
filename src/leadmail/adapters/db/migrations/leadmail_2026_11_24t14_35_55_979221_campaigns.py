"""Campaigns and their recipients: the tables (generated), then their indexes."""

from piccolo.columns.base import OnDelete, OnUpdate
from piccolo.columns.column_types import (
    JSONB,
    BigSerial,
    Boolean,
    ForeignKey,
    Text,
    Timestamptz,
    Varchar,
)
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


class Campaigns(Table, tablename="campaigns", schema=None):
    campaign_id = Varchar(
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


ID = "2026-11-24T14:35:55:979221"
VERSION = "1.38.0"
DESCRIPTION = "campaigns and their recipients"

# After the tables (TablesThenSql): what Piccolo's column options cannot express.
INDEXES = (
    "CREATE INDEX IF NOT EXISTS campaigns_account_listing"
    " ON campaigns (account_id, created_at DESC, campaign_id DESC)",
    # One recipient per lead of a campaign (freeze adds nothing twice).
    "CREATE UNIQUE INDEX IF NOT EXISTS campaign_recipients_lead"
    " ON campaign_recipients (campaign_id, lead_id)",
    # Claims (pending, in lead order), counts by status, pages of one status.
    "CREATE INDEX IF NOT EXISTS campaign_recipients_status"
    " ON campaign_recipients (campaign_id, status, lead_id)",
)
DROP_INDEXES = (
    "DROP INDEX IF EXISTS campaign_recipients_status",
    "DROP INDEX IF EXISTS campaign_recipients_lead",
    "DROP INDEX IF EXISTS campaigns_account_listing",
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
        class_name="CampaignRecipients",
        tablename="campaign_recipients",
        schema=None,
        columns=None,
    )

    manager.add_table(class_name="Campaigns", tablename="campaigns", schema=None, columns=None)

    manager.add_column(
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        column_name="recipient_id",
        db_column_name="recipient_id",
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        column_name="campaign_id",
        db_column_name="campaign_id",
        column_class_name="ForeignKey",
        column_class=ForeignKey,
        params={
            "references": Campaigns,
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        column_name="lead_id",
        db_column_name="lead_id",
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        column_name="status",
        db_column_name="status",
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        column_name="batch_id",
        db_column_name="batch_id",
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        column_name="claim_id",
        db_column_name="claim_id",
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        column_name="retry",
        db_column_name="retry",
        column_class_name="Boolean",
        column_class=Boolean,
        params={
            "default": False,
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        column_name="lease_until",
        db_column_name="lease_until",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        column_name="error",
        db_column_name="error",
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
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        column_name="updated_at",
        db_column_name="updated_at",
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="campaign_id",
        db_column_name="campaign_id",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 40,
            "default": "",
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
        table_class_name="Campaigns",
        tablename="campaigns",
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="name",
        db_column_name="name",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 200,
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="template_id",
        db_column_name="template_id",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 64,
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="audience",
        db_column_name="audience",
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

    manager.add_column(
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="variables",
        db_column_name="variables",
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

    manager.add_column(
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="sender",
        db_column_name="sender",
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="reply_to",
        db_column_name="reply_to",
        column_class_name="Text",
        column_class=Text,
        params={
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="send_at",
        db_column_name="send_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="status",
        db_column_name="status",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 16,
            "default": "",
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": True,
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
        column_name="failure_reason",
        db_column_name="failure_reason",
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
        table_class_name="Campaigns",
        tablename="campaigns",
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="updated_at",
        db_column_name="updated_at",
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="started_at",
        db_column_name="started_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
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
        table_class_name="Campaigns",
        tablename="campaigns",
        column_name="finished_at",
        db_column_name="finished_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
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
