"""The ids in paths, as the service makes them (domain/ids.py): Litestar checks each
against its pattern before a handler runs (any other text, a NUL among it, is 422 naming
the parameter, and never reaches storage), and the document states the same pattern."""

from __future__ import annotations

from typing import Annotated

from litestar.params import PathParameter

from leadmail.domain.campaigns import CAMPAIGN_ID
from leadmail.domain.email import MESSAGE_ID
from leadmail.domain.ids import MAX_ID_LENGTH
from leadmail.domain.lead_imports import IMPORT_ID
from leadmail.domain.leads import LEAD_ID

LeadId = Annotated[
    str,
    PathParameter(pattern=LEAD_ID.pattern, max_length=MAX_ID_LENGTH, description="A lead's id"),
]
MessageId = Annotated[
    str,
    PathParameter(
        pattern=MESSAGE_ID.pattern, max_length=MAX_ID_LENGTH, description="A message's id"
    ),
]
ImportId = Annotated[
    str,
    PathParameter(
        pattern=IMPORT_ID.pattern, max_length=MAX_ID_LENGTH, description="An import's id"
    ),
]
CampaignId = Annotated[
    str,
    PathParameter(
        pattern=CAMPAIGN_ID.pattern, max_length=MAX_ID_LENGTH, description="A campaign's id"
    ),
]
