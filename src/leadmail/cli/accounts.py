"""``leadmail accounts senders add|remove|list ACCOUNT [DOMAIN]``: the domains an account may
send from (services/sender_rules.py); ``leadmail accounts quota ACCOUNT [N]``: its daily
send quota (services/quotas.py); and how a command finds an account by its name."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable

from leadmail.adapters.db.connect import sqlite_path
from leadmail.adapters.http.timestamps import to_iso
from leadmail.bootstrap import Adapters, wire
from leadmail.cli.hints import command_line
from leadmail.config import Settings
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.quotas import MAX_QUOTA
from leadmail.services.quotas import CACHE_S as QUOTA_CACHE_S
from leadmail.services.registry import Services
from leadmail.services.sender_rules import MAX_AGE_S

EXIT_CODES = (
    "Exit codes: 0 done, 1 the account has no such domain (remove), 2 no such account or"
    " not a host name."
)


class UsageError(Exception):
    """Said on one line; exit code 2."""


async def account_id_of(services: Services, account: str) -> str:
    """The id of the account named ``account`` (as `keys create --account` named it)."""
    keys = await services.keys.list(account)
    if not keys:
        raise _no_account(account)
    return keys[0].account_id


def account_adapters(settings: Settings, account: str) -> Adapters:
    """The adapters of a command on ``account``, which never makes a database: a SQLite
    file that is not there holds no account, and is said so as any account not there."""
    if settings.is_sqlite and not os.path.exists(sqlite_path(settings.database_url)):
        raise _no_account(account)
    return Adapters.from_settings(settings, create=False, sending=False)


def _no_account(account: str) -> UsageError:
    make = command_line("keys", "create", "--account", account)
    return UsageError(
        f"no account named {account!r}. An account is made with its first key: {make}"
    )


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    accounts = commands.add_parser("accounts", help="manage accounts").add_subparsers(
        dest="accounts_command", required=True, metavar="WHAT"
    )
    senders = accounts.add_parser(
        "senders", help="the domains an account may send from"
    ).add_subparsers(dest="senders_command", required=True, metavar="ACTION")
    add = senders.add_parser(
        "add",
        help="let the account send from DOMAIN; from its first domain on, a from or reply_to"
        " in any other domain is refused (403 SENDER_NOT_ALLOWED)",
        description=EXIT_CODES,
    )
    remove = senders.add_parser(
        "remove",
        help="take DOMAIN from the account; with none left, LEADMAIL_ALLOWED_SENDER_DOMAINS"
        " applies to it again",
        description=EXIT_CODES,
    )
    for command, run in ((add, _add), (remove, _remove)):
        command.add_argument("account", metavar="ACCOUNT", help="the account's name")
        command.add_argument("domain", metavar="DOMAIN", help="a host name, e.g. acme.example")
        command.set_defaults(run=run)
    listing = senders.add_parser(
        "list", help="the account's sender domains", description=EXIT_CODES
    )
    listing.add_argument("account", metavar="ACCOUNT", help="the account's name")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(run=_list)
    quota = accounts.add_parser(
        "quota",
        help="show or set the account's daily send quota (messages a UTC day; 0: none)",
        description="Without N: the quota and what is used of today's. Exit codes: 0 done,"
        " 2 no such account or not a number from 0.",
    )
    quota.add_argument("account", metavar="ACCOUNT", help="the account's name")
    quota.add_argument("quota", metavar="N", nargs="?", help="messages a UTC day; 0: no quota")
    quota.set_defaults(run=_quota)


def _quota(settings: Settings, args: argparse.Namespace) -> int:
    wanted: int | None = None
    if args.quota is not None:
        try:
            wanted = int(args.quota)
        except ValueError:
            wanted = -1
        if not 0 <= wanted <= MAX_QUOTA:
            print(f"leadmail: N must be a whole number from 0 to {MAX_QUOTA}", file=sys.stderr)
            return 2

    async def quota(services: Services, account_id: str) -> int:
        if wanted is not None:
            await services.quota.set(account_id, wanted)
            shown = "no quota" if wanted == 0 else f"a quota of {wanted:,} messages a UTC day"
            print(f"Account '{args.account}' now has {shown}.")
            print(f"Servers and workers obey it within {QUOTA_CACHE_S:g} s.")
            return 0
        use = await services.quota.use(account_id)
        if use.quota == 0:
            print(f"Account '{args.account}' has no daily quota ({use.sent:,} sent today).")
        else:
            print(
                f"Account '{args.account}': {use.quota:,} messages a UTC day;"
                f" {use.sent:,} used today, {use.left:,} left."
            )
        return 0

    return _run(settings, args, quota)


def _add(settings: Settings, args: argparse.Namespace) -> int:
    async def add(services: Services, account_id: str) -> int:
        domain, added = await services.sender_domains.add(account_id, args.domain)
        if added:
            print(f"Added sender domain {domain.domain} to account '{args.account}'.")
            print(f"Servers and workers obey it within {MAX_AGE_S:g} s.")
        else:
            print(f"Account '{args.account}' already has sender domain {domain.domain}.")
        return 0

    return _run(settings, args, add)


def _remove(settings: Settings, args: argparse.Namespace) -> int:
    async def remove(services: Services, account_id: str) -> int:
        domain, removed = await services.sender_domains.remove(account_id, args.domain)
        if not removed:
            print(
                f"leadmail: account '{args.account}' has no sender domain {domain}",
                file=sys.stderr,
            )
            return 1
        left = await services.sender_domains.list(account_id)
        print(f"Removed sender domain {domain} from account '{args.account}'.")
        if not left:
            print(
                f"Account '{args.account}' has no sender domains left:"
                " LEADMAIL_ALLOWED_SENDER_DOMAINS applies to it again."
            )
        return 0

    return _run(settings, args, remove)


def _list(settings: Settings, args: argparse.Namespace) -> int:
    async def listing(services: Services, account_id: str) -> int:
        domains = await services.sender_domains.list(account_id)
        if args.json:
            for d in domains:
                print(json.dumps({"domain": d.domain, "created_at": to_iso(d.created_at)}))
            return 0
        if not domains:
            print(
                f"Account '{args.account}' has no sender domains:"
                " LEADMAIL_ALLOWED_SENDER_DOMAINS applies to it.",
                file=sys.stderr,
            )
            return 0
        width = max(len("domain"), *(len(d.domain) for d in domains))
        print(f"{'domain'.ljust(width)}  added")
        for d in domains:
            print(f"{d.domain.ljust(width)}  {to_iso(d.created_at)}")
        return 0

    return _run(settings, args, listing)


def _run(
    settings: Settings, args: argparse.Namespace, work: Callable[[Services, str], Awaitable[int]]
) -> int:
    """``work`` on the account ``args`` names; exit 2, said on one line, for no such
    account or a domain that is not a host name. A SQLite file that is not there holds no
    account: said so, not made."""

    async def run() -> int:
        adapters = account_adapters(settings, args.account)
        async with adapters.opened(apply_migrations=settings.migrate_on_start):
            services = wire(adapters, settings)
            return await work(services, await account_id_of(services, args.account))

    try:
        return asyncio.run(run())
    except UsageError as e:
        print(f"leadmail: {e}", file=sys.stderr)
        return 2
    except ValidationFailed as e:
        print(f"leadmail: {args.domain!r} {e.errors[0].message}", file=sys.stderr)
        return 2
