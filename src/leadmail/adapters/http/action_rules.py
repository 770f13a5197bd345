"""The rules of a bulk action's body (LeadActionRequest) and its answers' segment, stated in
the OpenAPI document: the body as its two shapes, the segment as one component, a
campaign's audience (campaign_rules.audience_schema)."""

from __future__ import annotations

from typing import Any

from litestar.openapi.spec import Reference, Schema
from litestar.openapi.spec.enums import OpenAPIType

from leadmail.adapters.http.action_schemas import LeadActionCountOut, LeadActionIn, LeadActionOut
from leadmail.adapters.http.campaign_rules import audience_schema, string_schema
from leadmail.adapters.http.rules import TAG
from leadmail.domain.tags import MAX_TAGS

ACTION_TEXT = (
    "A tag change (`add_tags`, `remove_tags`: with `tags`) or a `delete` (without), on every"
    " lead of `filter`; `dry_run`: count them, do nothing."
)


SEGMENT = "Segment"  # the component a bulk action's filter is (in the body and the answers)


def action_schema() -> Schema:
    """The body of startLeadAction (LeadActionRequest): one of its two shapes."""
    dry_run = Schema(
        type=OpenAPIType.BOOLEAN,
        default=False,
        description="Answer 200 with the number of leads it would touch now; do nothing",
    )
    tags = Schema(
        type=OpenAPIType.ARRAY,
        items=string_schema(**TAG),
        min_items=1,
        max_items=MAX_TAGS,
        description="The tags added or removed (stored lower-cased)",
    )
    segment = Reference(ref=f"#/components/schemas/{SEGMENT}")

    def shape(actions: list[str], **extra: Schema) -> Schema:
        properties: dict[str, Schema | Reference] = {
            "action": Schema(type=OpenAPIType.STRING, enum=actions),
            **extra,
            "filter": segment,
            "dry_run": dry_run,
        }
        required = ["action", *extra, "filter"]
        return Schema(
            type=OpenAPIType.OBJECT,
            properties=properties,
            required=required,
            additional_properties=False,
        )

    return Schema(
        one_of=[shape(["add_tags", "remove_tags"], tags=tags), shape(["delete"])],
        description=ACTION_TEXT,
    )


def state_action_rules(components: dict[str, Any]) -> None:
    """Write startLeadAction's body (keyed by its class name) as its two shapes, and the
    segment of the body and of the answers as one component (as it is read back: a
    value of ``field.<key>`` is a number, not an integer and a number at once)."""
    if LeadActionIn.__name__ not in components:
        return
    components[SEGMENT] = audience_schema()
    components[LeadActionIn.__name__] = action_schema()
    for answer in (LeadActionOut, LeadActionCountOut):
        schema = components.get(answer.__name__)
        if isinstance(schema, Schema) and schema.properties:
            schema.properties["filter"] = Reference(ref=f"#/components/schemas/{SEGMENT}")
