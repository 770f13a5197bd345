"""Use case: what an account holds about one person, shown or erased on request (GDPR
articles 15 and 17), through the one port that knows every record naming an address."""

from __future__ import annotations

import logging

from leadmail.domain.privacy import DataSubject, Erased, PersonalData
from leadmail.ports.privacy import PersonalDataRepository

log = logging.getLogger("leadmail.privacy")


class Privacy:
    def __init__(self, data: PersonalDataRepository) -> None:
        self._data = data

    async def export(self, account_id: str, email: str) -> PersonalData:
        """Everything ``account_id`` holds about ``email`` (``Name <addr>`` or ``addr``,
        in any case); ValidationFailed naming ``email`` when it is no address."""
        return await self._data.export(account_id, DataSubject.of(email))

    async def erase(self, account_id: str, email: str) -> Erased:
        """Erase ``email`` from ``account_id``'s records (ports/privacy.py says how);
        repeated, it changes nothing and counts 0s."""
        person = DataSubject.of(email)
        erased = await self._data.erase(account_id, person)
        # The digest only: the log must not keep what was just erased.
        log.info(
            "personal_data_erased",
            extra={
                "account_id": account_id,
                "digest": person.digest,
                "leads": erased.leads,
                "messages": erased.messages,
                "events": erased.events,
                "campaign_recipients": erased.campaign_recipients,
                "import_errors": erased.import_errors,
                "suppressions": erased.suppressions,
            },
        )
        return erased
