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
from litestar.openapi.spec import Parameter, Reference, Schema
from litestar.openapi.spec.enums import OpenAPIFormat, OpenAPIType

from leadmail.adapters.http import schemas
from leadmail.domain.addresses import MAX_EMAIL_LENGTH
from leadmail.domain.email import MAX_RECIPIENTS, MAX_SUBJECT
from leadmail.domain.idempotency import MAX_KEY_LENGTH
from leadmail.domain.lead_listing import CURSOR, MAX_CURSOR_LENGTH
from leadmail.domain.leads import MAX_NAME, MAX_NOTE, MAX_PHONE, MAX_SOURCE, PHONE_CHARACTERS
from leadmail.domain.templates import TEMPLATE_ID

# What Python's str.strip() removes (str.isspace), as a regular-expression class.
_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_CONTROL = r"\x00-\x1f\x7f-\x9f\u2028\u2029"  # domain/email.py's CONTROL


def _filled(allowed: str, filled: str, max_length: int | None = None) -> dict[str, Any]:
    """Characters of class ``allowed``, at least one of class ``filled`` (not a space)."""
    rule: dict[str, Any] = {"minLength": 1, "pattern": f"^[{allowed}]*[{filled}][{allowed}]*$"}
    if max_length is not None:
        rule["maxLength"] = max_length
    return rule


_ONE_LINE = r"^\r\n\x00"  # (negated) no line break, no NUL: a name, a source
_LINE_SPACE = _SPACE.replace(r"\n", "").replace(r"\r", "")  # spaces but line breaks


def _trimmed_line(max_length: int, *, required: bool) -> dict[str, Any]:
    """One line whose text, once the spaces around it are trimmed (as the domain trims
    it), is 1 to ``max_length`` characters long (or empty, when not ``required``)."""
    inner = f"[^{_SPACE}\\x00](?:[^\\r\\n\\x00]{{0,{max_length - 2}}}[^{_SPACE}\\x00])?"
    body = inner if required else f"(?:{inner})?"
    return {"pattern": f"^[{_LINE_SPACE}]*{body}[{_LINE_SPACE}]*$"}


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

LEAD_FIELDS: dict[str, dict[str, Any]] = {
    "name": {"minLength": 1, **_trimmed_line(MAX_NAME, required=True)},
    "email": ADDRESS,
    "source": _trimmed_line(MAX_SOURCE, required=False),
    "note": {"maxLength": MAX_NOTE, "pattern": r"^[^\x00]*$"},
    "phone": {
        "maxLength": MAX_PHONE,
        "pattern": f"^[{_SPACE}]*(?:[{PHONE_CHARACTERS}]*[0-9][{PHONE_CHARACTERS}]*)?[{_SPACE}]*$",
    },
}
RECIPIENTS = {"minItems": 1, "maxItems": MAX_RECIPIENTS}
SEND_FIELDS: dict[str, dict[str, Any]] = {
    # No control character but tab (domain/email.py's check_subject).
    "subject": _filled(_NO_CONTROL_BUT_TAB, f"^{_SPACE}{_CONTROL}", MAX_SUBJECT),
    "html": _filled(r"^\x00", f"^{_SPACE}\\x00"),
}
TEMPLATE_FIELDS: dict[str, dict[str, Any]] = {
    "template_id": {"pattern": TEMPLATE_ID.pattern},
}

BODIES: dict[type[Any], dict[str, dict[str, Any]]] = {
    schemas.LeadIn: LEAD_FIELDS,
    schemas.LeadPatchIn: LEAD_FIELDS,
    schemas.SendEmailIn: SEND_FIELDS,
    schemas.SendTemplateIn: TEMPLATE_FIELDS,
}
# Every send takes ``to`` (one address or 1-50) and ``from`` (an address).
SENDS = (schemas.SendEmailIn, schemas.SendTemplateIn)

# Parameters by (where, name): Litestar leaves a str | None parameter's constraints out.
PARAMETERS: dict[tuple[str, str], dict[str, Any]] = {
    ("header", "Idempotency-Key"): {
        "minLength": 1,
        "maxLength": MAX_KEY_LENGTH,
        "pattern": r"^[\x20-\x7e]+$",  # printable ASCII
    },
    ("query", "cursor"): {"maxLength": MAX_CURSOR_LENGTH, "pattern": CURSOR.pattern},
}


_KEYWORDS = {
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
    "minItems": "min_items",
    "maxItems": "max_items",
}


def _state(schema: Schema, rule: dict[str, Any]) -> None:
    for keyword, value in rule.items():
        if keyword == "format":
            schema.format = OpenAPIFormat(value)
        elif keyword != "type":
            setattr(schema, _KEYWORDS[keyword], value)


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
    for cls, fields in BODIES.items():
        body = components.get(cls.__name__)
        if not isinstance(body, Schema) or not body.properties:
            continue
        for field, rule in fields.items():
            for schema in _strings(body.properties[field]):
                _state(schema, rule)
    for cls in SENDS:
        body = components.get(cls.__name__)
        if not isinstance(body, Schema) or not body.properties:
            continue
        to = body.properties["to"]
        for branch in to.one_of or () if isinstance(to, Schema) else ():
            if isinstance(branch, Schema) and branch.type == OpenAPIType.ARRAY:
                _state(branch, RECIPIENTS)
                if isinstance(branch.items, Schema):
                    _state(branch.items, ADDRESS)
            elif isinstance(branch, Schema):
                _state(branch, ADDRESS)
        [sender] = _strings(body.properties["from"])
        _state(sender, ADDRESS)
        if sender_required:
            body.properties["from"] = sender
            body.required = sorted({*(body.required or ()), "from"})


def state_parameter_rules(parameter: Parameter) -> None:
    rule = PARAMETERS.get((parameter.param_in, parameter.name))
    if rule is not None and isinstance(parameter.schema, Schema):
        _state(parameter.schema, rule)
