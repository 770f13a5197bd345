"""The rules of the request bodies, headers and query parameters, stated in the OpenAPI
document from the domain's own limits.

The domain enforces them (every broken field named, in words a person can act on); the
document states them, from these same constants, so a generated client or a fuzzer knows
what the server takes. They are written as JSON Schema keywords over the text as sent.
"""

from __future__ import annotations

import re
from typing import Any

import email_validator
from litestar.openapi.spec import Reference, Schema
from litestar.openapi.spec.enums import OpenAPIFormat, OpenAPIType

from leadmail.adapters.http import privacy_schemas, schemas, suppression_schemas, template_schemas
from leadmail.domain.addresses import MAX_EMAIL_LENGTH
from leadmail.domain.custom_fields import FIELD_KEY, MAX_FIELD_TEXT, MAX_FIELDS
from leadmail.domain.email import MAX_HTML_BYTES, MAX_RECIPIENTS, MAX_SUBJECT
from leadmail.domain.leads import MAX_NAME, MAX_NOTE, MAX_PHONE, MAX_SOURCE, PHONE_CHARACTERS
from leadmail.domain.tags import MAX_TAG, MAX_TAGS
from leadmail.domain.template_drafts import MAX_NAME as MAX_TEMPLATE_NAME
from leadmail.domain.templates import TEMPLATE_ID
from leadmail.domain.text import BROKEN_LINE

# What Python's str.strip() removes (str.isspace), as a regular-expression class.
SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_CONTROL = r"\x00-\x1f\x7f-\x9f\u2028\u2029"  # domain/email.py's CONTROL


def _filled(allowed: str, filled: str, max_length: int | None = None) -> dict[str, Any]:
    """Characters of class ``allowed``, at least one of class ``filled`` (not a space)."""
    rule: dict[str, Any] = {"minLength": 1, "pattern": f"^[{allowed}]*[{filled}][{allowed}]*$"}
    if max_length is not None:
        rule["maxLength"] = max_length
    return rule


def _empty_or(rule: dict[str, Any]) -> dict[str, Any]:
    """``rule``, or the empty string."""
    pattern = rule["pattern"].removeprefix("^").removesuffix("$")
    return {key: value for key, value in rule.items() if key != "minLength"} | {
        "pattern": f"^(?:{pattern})?$"
    }


_ONE_LINE = r"^\r\n\x00"  # (negated) no line break, no NUL: a name, a source
_LINE_SPACE = SPACE.replace(r"\n", "").replace(r"\r", "")  # spaces but line breaks


def _trimmed_line(max_length: int, *, required: bool) -> dict[str, Any]:
    """One line whose text, once the spaces around it are trimmed (as the domain trims
    it), is 1 to ``max_length`` characters long (or empty, when not ``required``)."""
    inner = f"[^{SPACE}\\x00](?:[^\\r\\n\\x00]{{0,{max_length - 2}}}[^{SPACE}\\x00])?"
    body = inner if required else f"(?:{inner})?"
    return {"pattern": f"^[{_LINE_SPACE}]*{body}[{_LINE_SPACE}]*$"}


# One line (domain/text.py): nothing BROKEN_LINE finds, anywhere in the text.
_ONE_LINE = f"^(?![\\s\\S]*(?:{BROKEN_LINE.pattern}))"


def _one_line(rule: dict[str, Any]) -> dict[str, Any]:
    return {**rule, "pattern": _ONE_LINE + rule["pattern"].removeprefix("^")}


_NO_CONTROL_BUT_TAB = r"^\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029"


def _not_special_use() -> str:
    """No domain that is, or is under, a special-use name (``x@host.test``): email-validator
    refuses them (domain/addresses.py), whatever the case of their letters."""
    names = "|".join(
        "".join(f"[{c.upper()}{c}]" if c.isalpha() else re.escape(c) for c in name)
        for name in email_validator.SPECIAL_USE_DOMAIN_NAMES
    )
    return rf"^(?![\s\S]*[@.](?:{names})$)"


ADDRESS = {
    "type": "string",
    "format": "email",
    "maxLength": MAX_EMAIL_LENGTH,
    "pattern": _not_special_use(),
}

# ``from`` left blank (empty, or only spaces) where a default sender is configured: that
# sender (services/addressing.py).
BLANK = {"pattern": f"^[{SPACE}]*$"}
BLANK_SENDER_TEXT = "Blank (empty, or only spaces), as null or no `from`: the default sender"
# The sender rules (services/sender_rules.py, domain/email.py's parse_sender), in words.
_NO_AT_IN_NAME = (
    "An address; `Name <address>` is taken too, but a name holding `@` is refused (422)."
)
SENDER_TEXT = (
    f"{_NO_AT_IN_NAME} Its domain must be one of the account's sender domains when it has"
    " any, else one of the service's allowed domains when they are set (403"
    " `SENDER_NOT_ALLOWED`)."
)
REPLY_TO_TEXT = (
    f"{_NO_AT_IN_NAME} Its domain must be one of the account's sender domains when it has"
    " any (403 `SENDER_NOT_ALLOWED`)."
)

LEAD_FIELDS: dict[str, dict[str, Any]] = {
    "name": {"minLength": 1, **_one_line(_trimmed_line(MAX_NAME, required=True))},
    "email": ADDRESS,
    "source": _one_line(_trimmed_line(MAX_SOURCE, required=False)),
    "note": {"maxLength": MAX_NOTE, "pattern": r"^[^\x00]*$"},
    "phone": {
        "maxLength": MAX_PHONE,
        "pattern": f"^[{SPACE}]*(?:[{PHONE_CHARACTERS}]*[0-9][{PHONE_CHARACTERS}]*)?[{SPACE}]*$",
    },
}
# A tag as sent: trimmed (as the domain trims it), 1-64 of letters, digits, - _ . : and
# space (domain/tags.py).
TAG_EDGE = r"A-Za-z0-9_.:\-"
TAG = {
    "pattern": f"^[{SPACE}]*[{TAG_EDGE}](?:[{TAG_EDGE} ]{{0,{MAX_TAG - 2}}}[{TAG_EDGE}])?"
    f"[{SPACE}]*$"
}
TAGS = {"maxItems": MAX_TAGS, "items": TAG}
# Custom fields as sent: keys by pattern; values text, a number, a boolean or null. (The
# whole object's 8 KB is said in words: JSON Schema has no keyword for it.)
FIELDS_TEXT = (
    f"Custom fields: at most {MAX_FIELDS} keys of `{FIELD_KEY.pattern}`; values text (at most"
    f" {MAX_FIELD_TEXT} characters), numbers, booleans or null; at most 8 KB as compact JSON."
)
_STORED_VALUES: list[Schema | Reference] = [
    Schema(type=OpenAPIType.STRING, max_length=MAX_FIELD_TEXT, pattern=r"^[^\x00]*$"),
    Schema(type=OpenAPIType.NUMBER),
    Schema(type=OpenAPIType.BOOLEAN),
]
FIELD_VALUE = Schema(one_of=[*_STORED_VALUES, Schema(type=OpenAPIType.NULL)])
STORED_FIELD_VALUE = Schema(one_of=_STORED_VALUES)  # in an answer: null is no value
RECIPIENTS = {"minItems": 1, "maxItems": MAX_RECIPIENTS}
TO_TEXT = (
    f"One address, or a list of 1-{MAX_RECIPIENTS} (`Name <address>` or `address`). An"
    " address given twice (in any case, with a name or without) is sent to once, as first"
    " given."
)
SEND_FIELDS: dict[str, dict[str, Any]] = {
    # No control character but tab (domain/email.py's check_subject).
    "subject": _one_line(_filled(_NO_CONTROL_BUT_TAB, f"^{SPACE}{_CONTROL}", MAX_SUBJECT)),
    # (At most MAX_HTML_BYTES in UTF-8: as characters, a bound that never refuses less.)
    "html": _filled(r"^\x00", f"^{SPACE}\\x00", MAX_HTML_BYTES),
    # "" is allowed: no text part (HTML only); absent, one is derived from the HTML.
    "text": _empty_or(_filled(r"^\x00", f"^{SPACE}\\x00", MAX_HTML_BYTES)),
}
TEMPLATE_FIELDS: dict[str, dict[str, Any]] = {
    "template_id": {"pattern": TEMPLATE_ID.pattern},
}
# A template of an account's own (domain/template_drafts.py). Where braces may go (only in
# placeholders) and a layout's one `{{content}}` are said in the fields' words.
_TEMPLATE_TEXT = _filled(r"^\x00", f"^{SPACE}\\x00")
TEMPLATE_WRITE_FIELDS: dict[str, dict[str, Any]] = {
    "name": _one_line(_filled(r"^\x00", f"^{SPACE}\\x00", MAX_TEMPLATE_NAME)),
    "subject": SEND_FIELDS["subject"],
    "html": _TEMPLATE_TEXT,
    "text": _TEMPLATE_TEXT,
}

BODIES: dict[type[Any], dict[str, dict[str, Any]]] = {
    schemas.LeadIn: LEAD_FIELDS,
    schemas.LeadPatchIn: LEAD_FIELDS,
    schemas.SendEmailIn: SEND_FIELDS,
    schemas.SendTemplateIn: TEMPLATE_FIELDS,
    suppression_schemas.SuppressionIn: {"email": ADDRESS},
    privacy_schemas.EraseIn: {"email": ADDRESS},
    template_schemas.TemplateIn: TEMPLATE_WRITE_FIELDS,
    template_schemas.TemplateChangeIn: TEMPLATE_WRITE_FIELDS,
    template_schemas.TestSendIn: {"to": ADDRESS},
}
# Bodies with tags (arrays of tags) and custom fields, by property.
TAG_LISTS: dict[type[Any], tuple[str, ...]] = {
    schemas.LeadIn: ("tags",),
    schemas.LeadPatchIn: ("tags",),
    schemas.TagsIn: ("add", "remove"),
}
WITH_FIELDS = (schemas.LeadIn, schemas.LeadPatchIn, schemas.LeadOut)
# Every send takes ``to`` (one address or 1-50) and ``from`` (an address).
SENDS = (schemas.SendEmailIn, schemas.SendTemplateIn)

_KEYWORDS = {
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
    "minItems": "min_items",
    "maxItems": "max_items",
    "enum": "enum",
}


def apply_rule(schema: Schema, rule: dict[str, Any]) -> None:
    for keyword, value in rule.items():
        if keyword == "format":
            schema.format = OpenAPIFormat(value)
        elif keyword == "items":
            if isinstance(schema.items, Schema):
                apply_rule(schema.items, value)
        elif keyword != "type":
            setattr(schema, _KEYWORDS[keyword], value)


def _arrays(schema: Schema | Reference) -> list[Schema]:
    """The array schema(s) a property is: itself, or its array branches."""
    if not isinstance(schema, Schema):
        return []
    if schema.one_of:
        return [s for s in schema.one_of if isinstance(s, Schema) and s.type == OpenAPIType.ARRAY]
    return [schema] if schema.type == OpenAPIType.ARRAY else []


def _objects(schema: Schema | Reference) -> list[Schema]:
    if not isinstance(schema, Schema):
        return []
    if schema.one_of:
        return [s for s in schema.one_of if isinstance(s, Schema) and s.type == OpenAPIType.OBJECT]
    return [schema] if schema.type == OpenAPIType.OBJECT else []


def _state_tags_and_fields(components: dict[str, Any]) -> None:
    for cls, names in TAG_LISTS.items():
        body = components.get(cls.__name__)
        if isinstance(body, Schema) and body.properties:
            for name in names:
                for schema in _arrays(body.properties[name]):
                    apply_rule(schema, TAGS)
    for cls in WITH_FIELDS:
        body = components.get(cls.__name__)
        if isinstance(body, Schema) and body.properties:
            for schema in _objects(body.properties["fields"]):
                schema.max_properties = MAX_FIELDS
                schema.property_names = Schema(pattern=FIELD_KEY.pattern)
                schema.additional_properties = FIELD_VALUE
                schema.description = FIELDS_TEXT
                if cls is schemas.LeadOut:  # stored values: null is no value
                    schema.additional_properties = STORED_FIELD_VALUE


def _strings(schema: Schema | Reference) -> list[Schema]:
    """The string schema(s) a property is: itself, or its string branches."""
    if not isinstance(schema, Schema):
        return []
    if schema.one_of:
        return [s for s in schema.one_of if isinstance(s, Schema) and s.type == OpenAPIType.STRING]
    return [schema] if schema.type == OpenAPIType.STRING else []


def state_rules(components: dict[str, Any], *, sender_required: bool) -> None:
    """Write the rules into the request bodies' schemas (keyed by class name).
    ``sender_required``: no default sender is configured, so ``from`` must be sent."""
    _state_tags_and_fields(components)
    for cls, fields in BODIES.items():
        body = components.get(cls.__name__)
        if not isinstance(body, Schema) or not body.properties:
            continue
        for field, rule in fields.items():
            for schema in _strings(body.properties[field]):
                apply_rule(schema, rule)
    for cls in SENDS:
        body = components.get(cls.__name__)
        if not isinstance(body, Schema) or not body.properties:
            continue
        to = body.properties["to"]
        if isinstance(to, Schema):
            to.description = TO_TEXT
        for branch in to.one_of or () if isinstance(to, Schema) else ():
            if isinstance(branch, Schema) and branch.type == OpenAPIType.ARRAY:
                apply_rule(branch, RECIPIENTS)
                if isinstance(branch.items, Schema):
                    apply_rule(branch.items, ADDRESS)
            elif isinstance(branch, Schema):
                apply_rule(branch, ADDRESS)
        state_sender(body, sender_required=sender_required)
        for schema in _strings(body.properties["reply_to"]):
            apply_rule(schema, ADDRESS)
            schema.description = REPLY_TO_TEXT
    test = components.get(template_schemas.TestSendIn.__name__)
    if isinstance(test, Schema) and test.properties:
        state_sender(test, sender_required=sender_required)
    plain = components.get(schemas.SendEmailIn.__name__)
    if isinstance(plain, Schema):
        # One message, so one unsubscribe link: with the flag, `to` is one address.
        plain.schema_if = Schema(
            properties={"list_unsubscribe": Schema(const=True)}, required=["list_unsubscribe"]
        )
        plain.then = Schema(properties={"to": Schema(max_items=1)})


def state_sender(body: Schema, *, sender_required: bool) -> None:
    """A body's ``from``: an address, required when no default sender is configured; else
    an address, or blank or null for the default sender."""
    assert body.properties is not None
    sender = Schema(type=OpenAPIType.STRING, description=SENDER_TEXT)
    apply_rule(sender, ADDRESS)
    if sender_required:
        body.properties["from"] = sender
        body.required = sorted({*(body.required or ()), "from"})
        return
    blank = Schema(type=OpenAPIType.STRING, description=BLANK_SENDER_TEXT)
    apply_rule(blank, BLANK)
    # anyOf, not oneOf: where `format` is not asserted, "" would match both strings.
    body.properties["from"] = Schema(any_of=[sender, blank, Schema(type=OpenAPIType.NULL)])
