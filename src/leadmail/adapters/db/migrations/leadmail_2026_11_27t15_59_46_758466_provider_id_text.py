"""A message's provider_message_id as text, not varchar(255) (issue 28): the id is the
provider's to choose, and one longer than the column failed the record of a message the
provider had already accepted. Generated; Postgres only (SQLite enforces no length).
Backwards fails while a stored id is longer than 255 characters."""

from piccolo.columns.column_types import Text, Varchar

from leadmail.adapters.db.raw_migration import PostgresOnly

ID = "2026-11-27T15:59:46:758466"
VERSION = "1.38.0"
DESCRIPTION = "provider message id as text"


async def forwards():
    manager = PostgresOnly(migration_id=ID, app_name="leadmail", description=DESCRIPTION)

    manager.alter_column(
        table_class_name="Messages",
        tablename="messages",
        column_name="provider_message_id",
        db_column_name="provider_message_id",
        params={},
        old_params={},
        column_class=Text,
        old_column_class=Varchar,
        schema=None,
    )

    return manager
