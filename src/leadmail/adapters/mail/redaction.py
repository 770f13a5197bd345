"""The provider's API key kept out of error texts, in every form it travels in.

A provider may repeat what it was sent in its error text: the key itself, the base64 of
a basic-auth ``user:password`` (Mailgun's ``api:<key>``, Mailpit's ``user:password``),
either URL-encoded (an echoed query or redirect), or a JSON string's escaping of them.
Each such text is scrubbed before it is clipped, stored as a message's last_error or
logged: scrubbing after clipping could leave the start of a key cut at the limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

REDACTED = "[redacted]"

_PERCENT = re.compile(r"%[0-9A-F]{2}")


def secret_forms(api_key: str, auth_headers: Mapping[str, str]) -> tuple[str, ...]:
    """Every form of the key an error text must not hold, longest first (a form that
    holds another is replaced whole): the key; for a ``user:password`` key the password
    alone; each credential the auth headers carry (the token after "Basic" or "Bearer",
    or the header's whole value); and each of them URL-encoded, without its base64
    padding, and with "/" escaped as JSON may write it."""
    credentials = {api_key, api_key.partition(":")[2]}
    credentials.update(value.rpartition(" ")[2] for value in auth_headers.values())
    forms: set[str] = set()
    for credential in credentials - {""}:
        encoded = (quote(credential, safe=""), quote_plus(credential, safe=""), quote(credential))
        forms.update((credential, credential.rstrip("="), credential.replace("/", "\\/")))
        forms.update(encoded)
        # Percent-escapes in lower case ("%2f") decode the same.
        forms.update(_PERCENT.sub(lambda m: m[0].lower(), form) for form in encoded)
    return tuple(sorted(forms - {""}, key=len, reverse=True))


def scrub(text: str, forms: Iterable[str]) -> str:
    """``text`` with each of ``forms`` (secret_forms) replaced by ``[redacted]``."""
    for form in forms:
        if form in text:
            text = text.replace(form, REDACTED)
    return text
