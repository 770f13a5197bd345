"""Unique names and addresses, so that tests can share a server and its database."""

from __future__ import annotations

import uuid


def new_name(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}"


def new_email(tag: str) -> str:
    return f"{new_name(tag)}@example.com"
