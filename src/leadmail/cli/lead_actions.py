"""``leadmail leads tag|untag|delete``: a bulk action on a segment of an account from the
command line, by the same service the API runs, in this process, with a progress bar;
``--dry-run`` counts the leads it would touch and does nothing."""

from __future__ import annotations

import argparse
import asyncio
import sys

import msgspec

from leadmail.bootstrap import wire
from leadmail.cli.accounts import UsageError, account_adapters, account_id_of
from leadmail.cli.progress import Bar
from leadmail.config import Settings
from leadmail.domain.errors import ValidationFailed
from leadmail.domain.lead_actions import ActionKind, ActionOrder, ActionStatus, LeadAction

# Exit codes: 0 done (or counted), 1 the action failed, 2 it could not start (account,
# filter, tags or options).
COMMANDS = {
    "tag": (ActionKind.ADD_TAGS, "add tags to every lead of a segment"),
    "untag": (ActionKind.REMOVE_TAGS, "remove tags from every lead of a segment"),
    "delete": (ActionKind.DELETE, "delete every lead of a segment"),
}
FILTER_HELP = (
    'the segment as JSON, as a campaign\'s audience: \'{"tag": "march", "source":'
    " \"fair\"}'; '{}' is every lead"
)
INTERRUPTED = "interrupted at the command line; the leads counted were changed"


def add_commands(leads: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, (kind, text) in COMMANDS.items():
        command = leads.add_parser(
            name,
            help=text,
            description=f"{text[0].upper()}{text[1:]}. Exit codes: 0 done (or counted),"
            " 1 the action failed, 2 it could not start (account, filter, tags or options).",
        )
        command.add_argument("--account", required=True, help="the account's name")
        command.add_argument("--filter", required=True, help=FILTER_HELP)
        if kind is not ActionKind.DELETE:
            command.add_argument("--tags", required=True, help="comma-separated tags")
        else:
            command.add_argument(
                "--yes", action="store_true", help="delete without asking (needed to delete)"
            )
        command.add_argument(
            "--dry-run", action="store_true", help="count the leads it would touch; do nothing"
        )
        command.set_defaults(run=run_action, action_kind=kind)


def run_action(settings: Settings, args: argparse.Namespace) -> int:
    try:
        order = _order(args)
        if order.kind is ActionKind.DELETE and not args.dry_run and not args.yes:
            raise UsageError(
                "delete removes every lead of the filter: count them first with --dry-run,"
                " then pass --yes"
            )
        return asyncio.run(_run(settings, args, order))
    except UsageError as e:
        print(f"leadmail: {e}", file=sys.stderr)
        return 2


def _order(args: argparse.Namespace) -> ActionOrder:
    try:
        segment = msgspec.json.decode(args.filter)
    except msgspec.DecodeError as e:
        raise UsageError(f"--filter: not JSON: {e}") from e
    if not isinstance(segment, dict):
        raise UsageError("--filter: must be a JSON object ('{}' is every lead)")
    tags = None
    if args.action_kind is not ActionKind.DELETE:
        tags = [t for t in args.tags.split(",") if t.strip()]
    try:
        return ActionOrder.parse(args.action_kind.value, tags, segment)
    except ValidationFailed as e:
        raise UsageError("; ".join(f"{_option(f.field)}: {f.message}" for f in e.errors)) from e


def _option(field: str) -> str:
    """A field of the order as the command line names it: ``--filter tag``, ``--tags``."""
    if field.startswith("filter."):
        return f"--filter {field.removeprefix('filter.')}"
    return f"--{field}"


async def _run(settings: Settings, args: argparse.Namespace, order: ActionOrder) -> int:
    adapters = account_adapters(settings, args.account)
    async with adapters.opened(apply_migrations=settings.migrate_on_start):
        services = wire(adapters, settings)
        account_id = await account_id_of(services, args.account)
        if args.dry_run:
            total = await services.lead_actions.count(account_id, order)
            print(f"Dry run: {order.kind.value} would touch {total} leads; nothing done.")
            return 0
        started = await services.lead_actions.start(account_id, order, enqueue=False)
        bar = Bar("leads")
        try:
            finished = await services.lead_actions.run(
                started.action_id, lambda action: bar.show(action.done, action.total)
            )
        except BaseException:
            await asyncio.shield(services.lead_actions.stop(started.action_id, INTERRUPTED))
            raise
        finally:
            bar.close()
        if finished is None:  # taken over by a server's worker; it carries on there
            finished = await services.lead_actions.get(account_id, started.action_id)
        _summary(finished)
        return 0 if finished.status is ActionStatus.DONE else 1


def _summary(action: LeadAction) -> None:
    tags = f" [{', '.join(action.tags)}]" if action.tags else ""
    print(
        f"Bulk action {action.action_id} ({action.kind.value}{tags}): {action.status.value};"
        f" {action.done} of {action.total or 0} leads: {action.changed} changed,"
        f" {action.skipped} skipped, {action.failed} failed."
    )
    if action.error:
        print(f"Stopped: {action.error}")
