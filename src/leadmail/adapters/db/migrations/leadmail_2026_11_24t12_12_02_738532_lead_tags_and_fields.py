from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import JSONB, Array, Text
from piccolo.columns.indexes import IndexMethod

ID = "2026-11-24T12:12:02:738532"
VERSION = "1.38.0"
DESCRIPTION = "lead tags and custom fields"


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="leadmail", description=DESCRIPTION)

    manager.add_column(
        table_class_name="Leads",
        tablename="leads",
        column_name="fields",
        db_column_name="fields",
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
        table_class_name="Leads",
        tablename="leads",
        column_name="tags",
        db_column_name="tags",
        column_class_name="Array",
        column_class=Array,
        params={
            "default": list,
            "base_column": Text(
                default="",
                null=False,
                primary_key=False,
                unique=False,
                index=False,
                index_method=IndexMethod.btree,
                choices=None,
                db_column_name=None,
                secret=False,
            ),
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
