"""/api/v1/privacy: what an account holds about one person, exported or erased (GDPR
articles 15 and 17; services/privacy.py)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from litestar import Request, get, post
from litestar.params import JSONBody, Parameter

from leadmail.adapters.http.discovery import DiscoverableController, options_for
from leadmail.adapters.http.envelopes import ErasedEnvelope, PersonalDataEnvelope
from leadmail.adapters.http.operation_errors import error_responses
from leadmail.adapters.http.privacy_schemas import ErasedOut, EraseIn, PersonalDataOut
from leadmail.domain.addresses import MAX_EMAIL_LENGTH
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.keys import Principal
from leadmail.services.privacy import Privacy

AuthedRequest = Request[Principal, Any, Any]
EXPORT_TEXT = (
    "Everything this account holds about one address (GDPR article 15): the lead with its"
    " tags and custom fields, every message to the address with its events, the campaigns"
    " it was a recipient of, the import rows not imported that named it, and its"
    " suppression entry. Another account's records never appear. Case and a display name"
    " do not matter. After an erasure the lists are empty and `lead` is null; a suppression"
    " entry stays, holding the address's digest."
)
ERASE_TEXT = (
    "Erases one address from this account (GDPR article 17), all of it or none of it: the"
    " lead is deleted; in messages, their events, campaign recipients and import error rows"
    " the address and its display name are replaced by a one-way digest (`sha256:...`), and"
    " the subjects of messages to it are cleared; a suppression entry stays, as the digest,"
    " so the person is never mailed again (every send compares digests). Repeated, it"
    " changes nothing and answers 0s. Answers how many records of each kind it changed."
)


class PrivacyController(DiscoverableController):
    path = "/api/v1/privacy"
    tags = ["privacy"]
    privacy: ClassVar[Privacy]

    export_options = options_for("/export", "GET")
    erase_options = options_for("/erase", "POST")

    @get(
        "/export",
        summary="Export what the account holds about an address",
        description=EXPORT_TEXT,
        operation_id="exportPersonalData",
        responses=error_responses(ValidationFailed),
    )
    async def export_personal_data(
        self,
        request: AuthedRequest,
        email: Annotated[
            str,
            Parameter(
                description="The address (`ada@example.com`, URL-encoded)",
                min_length=1,
                max_length=MAX_EMAIL_LENGTH,
            ),
        ],
    ) -> PersonalDataEnvelope:
        data = await self.privacy.export(request.user.account_id, email)
        return PersonalDataEnvelope.of("Personal data exported", PersonalDataOut.of(data))

    @post(
        "/erase",
        status_code=200,
        summary="Erase an address from the account",
        description=ERASE_TEXT,
        operation_id="erasePersonalData",
        responses=error_responses(ValidationFailed, body=True),
    )
    async def erase_personal_data(
        self, request: AuthedRequest, data: JSONBody[EraseIn]
    ) -> ErasedEnvelope:
        erased = await self.privacy.erase(request.user.account_id, data.email)
        return ErasedEnvelope.of("Personal data erased", ErasedOut.of(erased))
