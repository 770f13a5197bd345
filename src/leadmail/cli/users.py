"""``leadmail users create|link|list|disable``: the people who sign in to the dashboard
(services/users.py). A user is made with a one-time link to set a password (valid 24 h);
``link`` makes a new one (a forgotten password, an expired link)."""

from __future__ import annotations

import argparse
import os
import sys

from leadmail.adapters.db.connect import sqlite_path
from leadmail.adapters.http.timestamps import to_iso
from leadmail.cli.hints import command_line
from leadmail.cli.running import with_services
from leadmail.cli.tables import print_rows
from leadmail.config import Settings
from leadmail.domain.errors import DomainError, ValidationFailed
from leadmail.domain.users import AccountNotFound, User
from leadmail.services.users import Invitation

EXIT_CODES = (
    "Exit codes: 0 done, 2 no such account or user, an address that is not one, or an"
    " address that already has a user."
)


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    users = commands.add_parser(
        "users", help="manage the people who sign in to the dashboard (/app/)"
    ).add_subparsers(dest="users_command", required=True, metavar="ACTION")
    create = users.add_parser(
        "create",
        help="add a user to an account; prints a one-time link to set a password (24 h)",
        description=EXIT_CODES,
    )
    create.add_argument("--account", required=True, help="the account's name")
    create.add_argument("--email", required=True, help="the address the user signs in with")
    create.set_defaults(run=_create)
    link = users.add_parser(
        "link",
        help="a new one-time link to set the user's password (an earlier one stops working)",
        description=EXIT_CODES,
    )
    link.add_argument("--email", required=True)
    link.set_defaults(run=_link)
    listing = users.add_parser("list", help="users, oldest first", description=EXIT_CODES)
    listing.add_argument("--account", help="only this account's users")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(run=_list)
    disable = users.add_parser(
        "disable",
        help="stop a user signing in; its sessions end at once",
        description=EXIT_CODES,
    )
    disable.add_argument("--email", required=True)
    disable.set_defaults(run=_disable)


def _refused(error: DomainError) -> int:
    text = error.described if isinstance(error, ValidationFailed) else error.message
    if isinstance(error, AccountNotFound):
        make = command_line("keys", "create", "--account", error.name)
        text += f". An account is made with its first key: {make}"
    print(f"leadmail: {text}", file=sys.stderr)
    return 2


def _missing_file(settings: Settings) -> bool:
    """A SQLite file that is not there holds no account or user (and is not made)."""
    return settings.is_sqlite and not os.path.exists(sqlite_path(settings.database_url))


def _create(settings: Settings, args: argparse.Namespace) -> int:
    if _missing_file(settings):
        return _refused(AccountNotFound(args.account))
    try:
        invitation = with_services(
            settings, lambda s: s.users.create(args.account, args.email), create=False
        )
    except DomainError as e:
        return _refused(e)
    user = invitation.user
    print(f"Created user {user.email} ({user.user_id}) in account '{user.account_name}'.")
    _say_link(invitation)
    return 0


def _link(settings: Settings, args: argparse.Namespace) -> int:
    try:
        invitation = with_services(settings, lambda s: s.users.new_link(args.email), create=False)
    except DomainError as e:
        return _refused(e)
    print(f"A new link for {invitation.user.email}; any earlier one no longer works.")
    _say_link(invitation)
    return 0


def _say_link(invitation: Invitation) -> None:
    print(
        f"Send them this link to set a password (at least 12 characters); it works once,"
        f" until {to_iso(invitation.expires_at)}:"
    )
    print(invitation.link)


def _list(settings: Settings, args: argparse.Namespace) -> int:
    if _missing_file(settings):
        return 0  # no database yet: no users
    users = with_services(settings, lambda s: s.users.list(args.account), create=False)
    columns = ["user_id", "account", "email", "state", "created"]
    print_rows(columns, [_row(u) for u in users], as_json=args.json)
    return 0


def _row(user: User) -> dict[str, str]:
    return {
        "user_id": user.user_id,
        "account": user.account_name,
        "email": user.email,
        "state": user.state,
        "created": to_iso(user.created_at),
    }


def _disable(settings: Settings, args: argparse.Namespace) -> int:
    try:
        user = with_services(settings, lambda s: s.users.disable(args.email), create=False)
    except DomainError as e:
        return _refused(e)
    print(f"Disabled {user.email} (account '{user.account_name}'); its sessions have ended.")
    return 0
