"""``leadmail campaigns status ID [--follow]``: a campaign of any account (its id is unique
across accounts), with a progress bar on stderr until it ends when following."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any, Never

from tqdm import tqdm

from leadmail.bootstrap import Adapters, wire
from leadmail.config import Settings
from leadmail.domain.campaigns import CampaignStatus
from leadmail.services.campaigns import CampaignView

FOLLOW_EVERY_S = 0.5


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    campaigns = commands.add_parser("campaigns", help="watch campaigns").add_subparsers(
        dest="campaigns_command", required=True, metavar="ACTION"
    )
    status = campaigns.add_parser(
        "status",
        help="a campaign's status and counts",
        description="Exit codes: 0 the campaign is done (or, without --follow, has not"
        " ended badly), 1 it failed or was cancelled, or no campaign has that id.",
    )
    status.add_argument("campaign_id")
    status.add_argument(
        "--follow",
        action="store_true",
        help="a progress bar (sent of total, rate, time left) until the campaign ends",
    )
    status.set_defaults(run=run_status)


def run_status(settings: Settings, args: argparse.Namespace) -> int:
    view = asyncio.run(_status(settings, args.campaign_id, follow=args.follow))
    _summary(view)
    status = view.campaign.status
    return 1 if status in (CampaignStatus.FAILED, CampaignStatus.CANCELLED) else 0


async def _status(settings: Settings, campaign_id: str, *, follow: bool) -> CampaignView:
    adapters = Adapters.from_settings(settings, create=False, sending=False)
    async with adapters.opened(apply_migrations=False):
        campaigns = wire(adapters, settings).campaigns
        view = await campaigns.find(campaign_id)
        if not follow:
            return view
        watched = WatchedRate(view)
        bar = _Bar(
            watched.per_second(view),
            total=view.counts.total,
            initial=view.counts.sent,  # what was sent before is no progress made now
            unit=" sent",
            file=sys.stderr,
            dynamic_ncols=True,
        )
        try:
            while True:
                bar.rate = watched.per_second(view)
                bar.update(view.counts.sent - bar.n)
                bar.set_postfix_str(_postfix(view), refresh=True)
                if view.campaign.status.finished:
                    return view
                await asyncio.sleep(FOLLOW_EVERY_S)
                view = await campaigns.find(campaign_id)
        finally:
            bar.close()


class WatchedRate:
    """Recipients sent per second while the campaign is watched; until one is, the
    campaign's own ``rate_per_minute`` (None when that is 0 too: no rate to show)."""

    def __init__(self, first: CampaignView, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._since = clock()
        self._sent = first.counts.sent

    def per_second(self, view: CampaignView) -> float | None:
        moved = view.counts.sent - self._sent
        seconds = self._clock() - self._since
        if moved > 0 and seconds > 0:
            return moved / seconds
        return view.rate_per_minute / 60 if view.rate_per_minute > 0 else None


if TYPE_CHECKING:
    _Tqdm = tqdm[Never]
else:
    _Tqdm = tqdm  # generic in its stubs only


class _Bar(_Tqdm):
    """tqdm showing the rate it is given (and the time left at it), not its own guess."""

    def __init__(self, rate: float | None, **options: Any) -> None:
        self.rate = rate  # before tqdm's first display, in its constructor
        super().__init__(**options)

    @property
    def format_dict(self) -> MutableMapping[str, Any]:
        shown = super().format_dict
        shown["rate"] = self.rate
        return shown


def _postfix(view: CampaignView) -> str:
    counts = view.counts
    shown = [str(view.campaign.status), f"failed={counts.failed}", f"skipped={counts.skipped}"]
    if counts.unknown:
        shown.append(f"unknown={counts.unknown}")
    return ", ".join(shown)


def _summary(view: CampaignView) -> None:
    campaign, counts = view.campaign, view.counts
    print(f"Campaign {campaign.campaign_id} ({campaign.name}): {campaign.status}")
    print(
        f"total {counts.total}: {counts.sent} sent, {counts.pending} pending,"
        f" {counts.failed} failed, {counts.skipped} skipped, {counts.suppressed} suppressed,"
        f" {counts.unknown} unknown, {counts.cancelled} cancelled"
    )
    if campaign.failure_reason:
        print(f"Failed: {campaign.failure_reason}")
