"""The rules of query parameters and headers, stated in the OpenAPI document from the
domain's own limits (rules.py has the bodies'): Litestar leaves a ``str | None``
parameter's constraints out."""

from __future__ import annotations

from typing import Any

from litestar.openapi.spec import Parameter, Schema

from leadmail.adapters.http.rules import ADDRESS, SPACE, TAG_EDGE, TAGS, apply_rule
from leadmail.domain.campaigns import CAMPAIGN_ID
from leadmail.domain.idempotency import MAX_KEY_LENGTH
from leadmail.domain.lead_listing import CURSOR, MAX_CURSOR_LENGTH
from leadmail.domain.lead_timeline import CURSOR as TIMELINE
from leadmail.domain.message_listing import STATUSES
from leadmail.domain.segments import MAX_SEARCH
from leadmail.domain.suppressions import CURSOR as SUPPRESSION_CURSOR
from leadmail.domain.suppressions import MAX_CURSOR_LENGTH as MAX_SUPPRESSION_CURSOR
from leadmail.domain.tags import MAX_TAG
from leadmail.domain.templates import TEMPLATE_ID
from leadmail.services.campaigns import RECIPIENT_CURSOR

# Tags in one text, comma-separated (an import's): blank items are none.
_ITEM = f"[{SPACE}]*(?:[{TAG_EDGE}](?:[{TAG_EDGE} ]{{0,{MAX_TAG - 2}}}[{TAG_EDGE}])?)?[{SPACE}]*"
TAG_TEXT = {"pattern": f"^{_ITEM}(?:,{_ITEM})*$"}
# Parameters by (where, name): Litestar leaves a str | None parameter's constraints out.
PARAMETERS: dict[tuple[str, str], dict[str, Any]] = {
    ("header", "Idempotency-Key"): {
        "minLength": 1,
        "maxLength": MAX_KEY_LENGTH,
        "pattern": r"^[\x20-\x7e]+$",  # printable ASCII
    },
    ("query", "cursor"): {"maxLength": MAX_CURSOR_LENGTH, "pattern": CURSOR.pattern},
    ("query", "tag"): TAGS,
    ("query", "any_tag"): TAGS,
    ("query", "not_tag"): TAGS,
    ("query", "created_after"): {"format": "date-time"},
    ("query", "created_before"): {"format": "date-time"},
    ("query", "tags"): TAG_TEXT,
    ("query", "email"): {"pattern": r"^[^\x00]*$"},
    ("query", "source"): {"pattern": r"^[^\x00]*$"},
    ("query", "phone"): {"pattern": r"^[^\x00]*$"},
    # A lead search: any text but NUL, up to the longest address.
    ("query", "q"): {"maxLength": MAX_SEARCH, "pattern": r"^[^\x00]*$"},
}
VERSION_CURSOR = r"^[1-9][0-9]{0,8}$"
# Parameters of one operation, by (operation id, name), before those above.
OPERATION_PARAMETERS: dict[tuple[str, str], dict[str, Any]] = {
    # A page of an import's error rows: after this row number.
    ("listLeadImportErrors", "cursor"): {"maxLength": 9, "pattern": r"^[0-9]{1,9}$"},
    # A page of a campaign's recipients: after this lead id.
    ("listCampaignRecipients", "cursor"): {"maxLength": 40, "pattern": RECIPIENT_CURSOR.pattern},
    # A page of a template's versions: older than this version.
    ("listTemplateVersions", "cursor"): {"maxLength": 9, "pattern": VERSION_CURSOR},
    # The message log's `to`: an address, perhaps with a display name; no NUL.
    ("listMessages", "to"): {"pattern": r"^[^\x00]*$"},  # as the leads' email filter
    ("listMessages", "template_id"): {"pattern": TEMPLATE_ID.pattern},
    ("listMessages", "campaign_id"): {"pattern": CAMPAIGN_ID.pattern},
    ("listMessages", "status"): {"enum": list(STATUSES)},
    # The person of an export: an address, as an erasure's body names one.
    ("exportPersonalData", "email"): ADDRESS,
    # A page of a lead's timeline: after this time, source and id.
    ("getLeadTimeline", "cursor"): {"maxLength": 17 + 1 + 1 + 1 + 40, "pattern": TIMELINE.pattern},
    # A page of the suppression list: after this time and digest.
    ("listSuppressions", "cursor"): {
        "maxLength": MAX_SUPPRESSION_CURSOR,
        "pattern": SUPPRESSION_CURSOR.pattern,
    },
}


def state_parameter_rules(parameter: Parameter, operation_id: str | None = None) -> None:
    rule = OPERATION_PARAMETERS.get((operation_id or "", parameter.name))
    if rule is None:
        rule = PARAMETERS.get((parameter.param_in, parameter.name))
    if rule is not None and isinstance(parameter.schema, Schema):
        apply_rule(parameter.schema, rule)
