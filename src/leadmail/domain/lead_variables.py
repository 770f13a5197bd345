"""What a template sent to a lead can say about the lead (campaigns fill templates with it)."""

from __future__ import annotations

import json

from leadmail.domain.custom_fields import FieldValue
from leadmail.domain.leads import Lead

# The variables every lead has (a custom field gives any other).
EVERY_LEAD_HAS = frozenset({"name", "first_name", "email", "source"})


def template_variables(lead: Lead) -> dict[str, str]:
    """``name``, ``first_name`` (the name's first word), ``email``, ``source``, and every
    custom field by its key, as text (``true``/``false`` for booleans, numbers as JSON
    writes them). A custom field ``first_name`` is used instead of the name's first word
    (a spreadsheet's own column knows better); one named ``name``, ``email`` or ``source``
    never replaces the lead's own."""
    words = lead.name.split()
    variables = {key: _text(value) for key, value in lead.fields.items()}
    variables.setdefault("first_name", words[0] if words else "")
    variables.update(name=lead.name, email=lead.email, source=lead.source)
    return variables


def _text(value: FieldValue) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)  # true, false, 42, 4.5
