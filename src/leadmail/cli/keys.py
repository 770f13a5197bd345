"""``leadmail keys create|list|revoke``: API keys (services/keys.py); an account is made
with its first key."""

from __future__ import annotations

import argparse

from leadmail.adapters.http.timestamps import to_iso
from leadmail.cli.running import with_services
from leadmail.cli.tables import print_rows
from leadmail.config import Settings
from leadmail.domain.keys import ApiKey


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keys = commands.add_parser("keys", help="manage API keys").add_subparsers(
        dest="keys_command", required=True, metavar="ACTION"
    )
    create = keys.add_parser("create", help="create a key (and the account if new)")
    create.add_argument("--account", required=True, help="account name, e.g. acme-academy")
    create.add_argument("--label", default="", help="what the key is for")
    create.set_defaults(run=_keys_create)
    listing = keys.add_parser("list", help="list keys (never the keys themselves)")
    listing.add_argument("--account", help="only this account's keys")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(run=_keys_list)
    revoke = keys.add_parser("revoke", help="revoke a key; it is refused from the next request")
    revoke.add_argument("key_id")
    revoke.set_defaults(run=_keys_revoke)


def _keys_create(settings: Settings, args: argparse.Namespace) -> int:
    created = with_services(settings, lambda s: s.keys.create(args.account, args.label))
    key = created.key
    print(f"Created API key {key.key_id} for account '{key.account_name}'.")
    print("This is the only time the key is shown. Store it now:")
    print(created.secret)
    return 0


def _keys_list(settings: Settings, args: argparse.Namespace) -> int:
    keys = with_services(settings, lambda s: s.keys.list(args.account), create=False)
    columns = ["key_id", "account", "label", "prefix", "created", "last_used", "revoked"]
    print_rows(columns, [_key_row(k) for k in keys], as_json=args.json)
    return 0


def _key_row(key: ApiKey) -> dict[str, str]:
    return {
        "key_id": key.key_id,
        "account": key.account_name,
        "label": key.label,
        "prefix": key.prefix,
        "created": to_iso(key.created_at),
        "last_used": to_iso(key.last_used_at) if key.last_used_at else "-",
        "revoked": to_iso(key.revoked_at) if key.revoked_at else "-",
    }


def _keys_revoke(settings: Settings, args: argparse.Namespace) -> int:
    key = with_services(settings, lambda s: s.keys.revoke(args.key_id), create=False)
    assert key.revoked_at is not None
    print(f"Revoked {key.key_id} (account '{key.account_name}') at {to_iso(key.revoked_at)}.")
    return 0
