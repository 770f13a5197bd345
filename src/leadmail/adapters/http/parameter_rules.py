"""The rules of query parameters and headers, stated in the OpenAPI document from the
domain's own limits (rules.py has the bodies'): Litestar leaves a ``str | None``
parameter's constraints out."""

from __future__ import annotations

from typing import Any

from litestar.openapi.spec import Parameter, Schema

from leadmail.adapters.http.rules import ADDRESS, SPACE, TAG_EDGE, apply_rule
from leadmail.domain.campaigns import CAMPAIGN_ID
from leadmail.domain.idempotency import MAX_KEY_LENGTH
from leadmail.domain.lead_listing import CURSOR, MAX_CURSOR_LENGTH
from leadmail.domain.lead_timeline import CURSOR as TIMELINE
from leadmail.domain.message_listing import STATUSES
from leadmail.domain.segments import MAX_SEARCH
from leadmail.domain.suppressions import CURSOR as SUPPRESSION_CURSOR
from leadmail.domain.suppressions import MAX_CURSOR_LENGTH as MAX_SUPPRESSION_CURSOR
from leadmail.domain.tags import MAX_TAG, MAX_TAGS
from leadmail.domain.templates import TEMPLATE_ID
from leadmail.services.campaigns import RECIPIENT_CURSOR

# A query value holds no control character (query_names.py): of the spaces a tag may be
# padded with, those that are not.
_SPACE = SPACE.replace(r"\t\n\x0b\x0c\r\x1c-\x1f", "")
_NO_CONTROL = {"pattern": r"^[^\x00-\x1f\x7f]*$"}
_TAG = f"[{TAG_EDGE}](?:[{TAG_EDGE} ]{{0,{MAX_TAG - 2}}}[{TAG_EDGE}])?"
QUERY_TAGS = {"maxItems": MAX_TAGS, "items": {"pattern": f"^[{_SPACE}]*{_TAG}[{_SPACE}]*$"}}
# Tags in one text, comma-separated (an import's): blank items are none.
_ITEM = f"[{_SPACE}]*(?:{_TAG})?[{_SPACE}]*"
TAG_TEXT = {"pattern": f"^{_ITEM}(?:,{_ITEM})*$"}
# Parameters by (where, name): Litestar leaves a str | None parameter's constraints out.
PARAMETERS: dict[tuple[str, str], dict[str, Any]] = {
    ("header", "Idempotency-Key"): {
        "minLength": 1,
        "maxLength": MAX_KEY_LENGTH,
        "pattern": r"^[\x20-\x7e]+$",  # printable ASCII
    },
    ("query", "cursor"): {"maxLength": MAX_CURSOR_LENGTH, "pattern": CURSOR.pattern},
    ("query", "tag"): QUERY_TAGS,
    ("query", "any_tag"): QUERY_TAGS,
    ("query", "not_tag"): QUERY_TAGS,
    ("query", "created_after"): {"format": "date-time"},
    ("query", "created_before"): {"format": "date-time"},
    ("query", "tags"): TAG_TEXT,
    ("query", "email"): _NO_CONTROL,
    ("query", "source"): _NO_CONTROL,
    ("query", "phone"): _NO_CONTROL,
    # A lead search: any text but control characters, up to the longest address.
    ("query", "q"): {"maxLength": MAX_SEARCH, **_NO_CONTROL},
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
    # The message log's `to`: an address, perhaps with a display name; no control character.
    ("listMessages", "to"): _NO_CONTROL,  # as the leads' email filter
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
