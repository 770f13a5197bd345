"""The ids in paths, as the service makes them (domain/ids.py): Litestar checks each
against its pattern before a handler runs (any other text, a NUL among it, is 422 naming
the parameter, and never reaches storage), and the document states the same pattern."""

from __future__ import annotations

import re
from typing import Annotated

from litestar.params import ParameterKwarg, PathParameter

from leadmail.domain.campaigns import CAMPAIGN_ID
from leadmail.domain.email import MESSAGE_ID
from leadmail.domain.ids import MAX_ID_LENGTH
from leadmail.domain.lead_actions import ACTION_ID
from leadmail.domain.lead_imports import IMPORT_ID
from leadmail.domain.leads import LEAD_ID
from leadmail.domain.templates import TEMPLATE_ID


def _in_path(rule: re.Pattern[str], description: str) -> ParameterKwarg:
    """The path parameter of an id of ``rule``'s kind (the same pattern as the answers'
    ids in schemas.py)."""
    return PathParameter(pattern=rule.pattern, max_length=MAX_ID_LENGTH, description=description)


LeadId = Annotated[str, _in_path(LEAD_ID, "A lead's id")]
MessageId = Annotated[str, _in_path(MESSAGE_ID, "A message's id")]
ImportId = Annotated[str, _in_path(IMPORT_ID, "An import's id")]
ActionId = Annotated[str, _in_path(ACTION_ID, "A bulk action's id")]
CampaignId = Annotated[str, _in_path(CAMPAIGN_ID, "A campaign's id")]
TemplateIdPath = Annotated[
    str,
    PathParameter(
        pattern=TEMPLATE_ID.pattern,
        max_length=64,
        description="A template's id: one of yours, or a predefined one",
    ),
]
