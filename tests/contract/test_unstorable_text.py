"""Text a database cannot store (a NUL on Postgres) leaves an adapter as UnstorableText, a
422 naming nothing it could not know, never as the driver's error (issue 24). The rules
refuse such text first; this is what holds should one ever get through. Memory and SQLite
store a NUL as any other character."""

from __future__ import annotations

import asyncpg
import pytest

from leadmail.adapters.db.campaigns import PiccoloCampaignRepository
from leadmail.adapters.db.lead_imports import PiccoloLeadImportRepository
from leadmail.adapters.db.leads import PiccoloLeadRepository
from leadmail.adapters.db.messages import PiccoloMessageRepository
from leadmail.domain.errors import ValidationFailed
from leadmail.ports.errors import UnstorableText
from tests.contract.support import Storage, a_lead

pytestmark = pytest.mark.postgres
ACCOUNT = "acc_unstorable"


async def test_a_nul_in_an_id_or_a_field_is_unstorable_text_on_postgres(
    postgres_storage: Storage,
) -> None:
    database = postgres_storage.database
    assert database is not None
    leads = PiccoloLeadRepository(database)
    calls = [
        leads.get(ACCOUNT, "ld_\x00"),
        leads.delete(ACCOUNT, "ld_\x00"),
        leads.add(a_lead(ACCOUNT, name="Ada\x00")),
        PiccoloMessageRepository(database).get(ACCOUNT, "msg_\x00"),
        PiccoloLeadImportRepository(database).get(ACCOUNT, "imp_\x00"),
        PiccoloCampaignRepository(database).get(ACCOUNT, "cmp_\x00"),
    ]
    for call in calls:
        with pytest.raises(UnstorableText) as caught:
            await call
        assert isinstance(caught.value, ValidationFailed)  # answered 422
        assert isinstance(caught.value.__cause__, asyncpg.CharacterNotInRepertoireError)
