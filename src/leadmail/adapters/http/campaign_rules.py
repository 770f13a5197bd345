"""The rules of a campaign's request body (NewCampaign), stated in the OpenAPI document from
the domain's own limits: above all its ``audience``, a segment as a JSON object, whose
filters, value types and ``field.<key>`` names the document spells out."""

from __future__ import annotations

from typing import Any

from litestar.openapi.spec import Schema
from litestar.openapi.spec.enums import OpenAPIFormat, OpenAPIType

from leadmail.adapters.http.campaign_schemas import CampaignChangeIn, CampaignIn
from leadmail.adapters.http.rules import (
    ADDRESS,
    LEAD_FIELDS,
    REPLY_TO_TEXT,
    TAG,
    TEMPLATE_FIELDS,
    apply_rule,
    state_sender,
)
from leadmail.domain.custom_fields import FIELD_KEY, MAX_FIELD_TEXT, MAX_FIELDS
from leadmail.domain.segments import (
    EXACT_FILTERS,
    FIELD_PREFIX,
    FILTER_NAMES,
    MAX_SEARCH,
    SEARCH_FILTER,
    TAG_FILTERS,
    TIME_FILTERS,
)
from leadmail.domain.tags import MAX_TAGS
from leadmail.services.campaign_checks import MAX_VARIABLES

_NO_NUL = r"^[^\x00]*$"
AUDIENCE_TEXT = (
    "The segment: the filters of listLeads as a JSON object (`{}`: every lead). `tag`,"
    " `any_tag`, `not_tag`: a tag or a non-empty list of tags; `email`, `source`, `phone`: text;"
    " `created_after`, `created_before`: RFC 3339; `field.<key>`: a custom field's value,"
    ' compared as its own JSON type (`42` matches numbers, `"42"` text, in any case); `q`:'
    " a search (the beginning of a word of the name, or of the address, in any case)."
)


def string_schema(**rule: Any) -> Schema:
    schema = Schema(type=OpenAPIType.STRING)
    apply_rule(schema, rule)
    return schema


def _tag_filter() -> Schema:
    return Schema(
        one_of=[
            string_schema(**TAG),
            # Not empty: only `{}` means every lead (LeadFilter refuses `[]`).
            Schema(
                type=OpenAPIType.ARRAY, items=string_schema(**TAG), min_items=1, max_items=MAX_TAGS
            ),
        ]
    )


def audience_schema() -> Schema:
    properties: dict[str, Schema] = {name: _tag_filter() for name in TAG_FILTERS}
    properties |= {name: string_schema(pattern=_NO_NUL) for name in EXACT_FILTERS}
    properties |= {name: string_schema(format="date-time") for name in TIME_FILTERS}
    properties[SEARCH_FILTER] = string_schema(maxLength=MAX_SEARCH, pattern=_NO_NUL)
    field_value = Schema(
        one_of=[
            string_schema(maxLength=MAX_FIELD_TEXT, pattern=_NO_NUL),
            Schema(type=OpenAPIType.NUMBER),
            Schema(type=OpenAPIType.BOOLEAN),
        ]
    )
    key = FIELD_KEY.pattern.removeprefix("^")
    return Schema(
        type=OpenAPIType.OBJECT,
        description=AUDIENCE_TEXT,
        properties=dict(properties),
        pattern_properties={f"^{FIELD_PREFIX.replace('.', '[.]')}{key}": field_value},
        additional_properties=False,
        max_properties=len(FILTER_NAMES) + MAX_FIELDS,
    )


def state_campaign_rules(components: dict[str, Any], *, sender_required: bool) -> None:
    """Write the rules into NewCampaign and CampaignChange (keyed by their class names).
    ``sender_required``: no default sender is configured, so ``from`` must be sent (to
    create; a change may leave it out, to keep the stored one)."""
    for cls in (CampaignIn, CampaignChangeIn):
        body = components.get(cls.__name__)
        if isinstance(body, Schema) and body.properties:
            _state_body(body, sender_required=sender_required, new=cls is CampaignIn)


def _state_body(body: Schema, *, sender_required: bool, new: bool) -> None:
    assert body.properties is not None
    props = body.properties
    for name, prop in props.items():  # a change's `str | Unset`: one schema, not oneOf [it]
        if isinstance(prop, Schema) and prop.one_of and len(prop.one_of) == 1:
            props[name] = prop.one_of[0]
    props["audience"] = audience_schema()
    props["variables"] = Schema(
        type=OpenAPIType.OBJECT,
        description=(
            "Shared values by template variable name, used where a lead has no value of"
            " its own (the lead's wins)"
        ),
        max_properties=MAX_VARIABLES,
        property_names=string_schema(pattern=_NO_NUL),
        additional_properties=string_schema(pattern=_NO_NUL),
    )
    if new:
        props["draft"] = Schema(
            type=OpenAPIType.BOOLEAN,
            default=False,
            description=(
                "Stay a draft until startCampaign (else it starts at once or at `send_at`)"
            ),
        )
    strings = {
        "name": LEAD_FIELDS["name"],
        "template_id": TEMPLATE_FIELDS["template_id"],
        "reply_to": ADDRESS,
        "send_at": {"format": OpenAPIFormat.DATE_TIME.value},
    }
    for name, rule in strings.items():
        prop = props[name]
        for schema in (prop.one_of or [prop]) if isinstance(prop, Schema) else ():
            if isinstance(schema, Schema) and schema.type == OpenAPIType.STRING:
                apply_rule(schema, rule)
                if name == "reply_to":
                    schema.description = REPLY_TO_TEXT
    state_sender(body, sender_required=sender_required)
    if not new and body.required:  # a change keeps what it leaves out
        body.required = None
