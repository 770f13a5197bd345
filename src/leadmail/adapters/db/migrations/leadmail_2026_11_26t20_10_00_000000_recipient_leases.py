"""A campaign recipient's batch is leased, not claimed (an idempotency key is claimed):
the column that says which lease holds it is named so."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

ID = "2026-11-26T20:10:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "recipient leases"


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="leadmail", description=DESCRIPTION)
    manager.rename_column(
        table_class_name="CampaignRecipients",
        tablename="campaign_recipients",
        old_column_name="claim_id",
        new_column_name="lease_id",
        old_db_column_name="claim_id",
        new_db_column_name="lease_id",
        schema=None,
    )
    return manager
