"""The installation's own secrets (the unsubscribe links' signing key when
LEADMAIL_SECRET_KEY is not set): one table, generated."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Text, Timestamptz, Varchar
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.columns.indexes import IndexMethod

ID = "2026-11-26T21:11:37:112920"
VERSION = "1.38.0"
DESCRIPTION = "installation secrets"


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="leadmail", description=DESCRIPTION)

    manager.add_table(
        class_name="InstallationSecrets",
        tablename="installation_secrets",
        schema=None,
        columns=None,
    )

    manager.add_column(
        table_class_name="InstallationSecrets",
        tablename="installation_secrets",
        column_name="name",
        db_column_name="name",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 64,
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
        table_class_name="InstallationSecrets",
        tablename="installation_secrets",
        column_name="value",
        db_column_name="value",
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
        table_class_name="InstallationSecrets",
        tablename="installation_secrets",
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
