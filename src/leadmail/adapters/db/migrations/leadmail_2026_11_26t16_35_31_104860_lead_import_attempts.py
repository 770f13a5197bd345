from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Integer
from piccolo.columns.indexes import IndexMethod

ID = "2026-11-26T16:35:31:104860"
VERSION = "1.38.0"
DESCRIPTION = "lead import attempts"


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="leadmail", description=DESCRIPTION)

    manager.add_column(
        table_class_name="LeadImports",
        tablename="lead_imports",
        column_name="attempts",
        db_column_name="attempts",
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

    return manager
