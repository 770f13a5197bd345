from __future__ import annotations

import pytest

from leadmail.adapters.memory.leads import MemoryLeadRepository
from leadmail.domain.errors import LeadNotFound
from leadmail.domain.leads import LeadFields
from leadmail.services.leads import LeadService


async def test_a_deleted_lead_is_gone() -> None:
    service = LeadService(MemoryLeadRepository())
    lead = await service.add("acc_1", LeadFields.parse(name="Ada", email="ada@example.com"))
    await service.delete("acc_1", lead.lead_id)
    with pytest.raises(LeadNotFound):
        await service.get("acc_1", lead.lead_id)
