from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Varchar
from piccolo.columns.indexes import IndexMethod

ID = "2026-11-24T07:53:01:537882"
VERSION = "1.38.0"
DESCRIPTION = "email_messages renamed messages; lead phone"


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="leadmail", description=DESCRIPTION)

    manager.rename_table(
        old_class_name="EmailMessages",
        old_tablename="email_messages",
        new_class_name="Messages",
        new_tablename="messages",
        schema=None,
    )

    manager.add_column(
        table_class_name="Leads",
        tablename="leads",
        column_name="phone",
        db_column_name="phone",
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

    return manager
