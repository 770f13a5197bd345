"""MessageRepository.list (ports/messages.py, domain/message_listing.py), run against every
adapter: the message log newest first, its cursor, each filter, the walk a status filter
makes, and one account's log only."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from leadmail.domain.email import Message, MessageStatus
from leadmail.domain.lead_listing import PageCursor
from leadmail.domain.message_listing import MessageQuery, MessageRows, page_of
from tests.contract.support import T0, Storage, a_message

WIDE = 1_000  # a window that never runs out in these tests


def t(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


async def stored(storage: Storage, *messages: Message) -> list[Message]:
    await storage.messages.add(list(messages))
    return list(messages)


def mid(account: str, name: str) -> str:
    """A message id unique to the account (Postgres is shared by the tests): its name, then
    the account's id."""
    return f"msg_{name}_{account.removeprefix('acc_')}"


def named(account: str, message_id: str) -> str:
    return message_id.removeprefix("msg_").removesuffix(f"_{account.removeprefix('acc_')}")


def ids(rows: MessageRows) -> list[str]:
    return [named(m.account_id, m.message_id) for m in rows.messages]


async def every_page(storage: Storage, account: str, **given: str | int) -> list[list[str]]:
    """Each page's message ids, following the cursors to the end."""
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        query = MessageQuery.parse(cursor=cursor, **given)  # type: ignore[arg-type]
        page = page_of(await storage.messages.list(account, query, WIDE), query.limit)
        pages.append([named(account, m.message_id) for m in page.messages])
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor


class TestMessageListing:
    async def test_newest_first_with_ties_by_id_and_cursor_pages(self, storage: Storage) -> None:
        account = await storage.new_account()
        made = await stored(
            storage,
            a_message(account, message_id=mid(account, "a"), created_at=t(1)),
            a_message(account, message_id=mid(account, "c"), created_at=t(2)),
            a_message(account, message_id=mid(account, "b"), created_at=t(2)),
            a_message(account, message_id=mid(account, "d"), created_at=t(3)),
        )

        rows = await storage.messages.list(account, MessageQuery(limit=10), WIDE)

        assert ids(rows) == ["d", "c", "b", "a"]
        assert rows.walked_to is None
        assert rows.messages[0] == made[3]  # every field read back
        assert await every_page(storage, account, limit=3) == [
            ["d", "c", "b"],
            ["a"],
        ]
        assert await every_page(storage, account, limit=2) == [
            ["d", "c"],
            ["b", "a"],
        ]

    async def test_a_page_holds_limit_plus_one_to_tell_there_is_more(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        await stored(storage, *(a_message(account, created_at=t(i)) for i in range(5)))

        rows = await storage.messages.list(account, MessageQuery(limit=2), WIDE)

        assert len(rows.messages) == 3

    async def test_to_finds_every_message_naming_the_address_in_any_case(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        await stored(
            storage,
            a_message(
                account, message_id=mid(account, "1"), to=("ada@example.com",), created_at=t(1)
            ),
            a_message(
                account,
                message_id=mid(account, "2"),
                to=("tom@example.com", '"Ada L" <Ada@Example.com>'),
                created_at=t(2),
            ),
            a_message(
                account, message_id=mid(account, "3"), to=("tom@example.com",), created_at=t(3)
            ),
        )

        for asked in ("ada@example.com", "ADA@example.COM", "Someone <ada@example.com>"):
            query = MessageQuery.parse(to=asked)
            assert ids(await storage.messages.list(account, query, WIDE)) == ["2", "1"]
        nobody = MessageQuery.parse(to="nobody@example.com")
        assert ids(await storage.messages.list(account, nobody, WIDE)) == []
        assert await every_page(storage, account, to="tom@example.com", limit=1) == [
            ["3"],
            ["2"],
        ]

    async def test_template_campaign_and_time_filters(self, storage: Storage) -> None:
        account = await storage.new_account()
        welcome = a_message(
            account, message_id=mid(account, "w"), template_id="welcome", created_at=t(1)
        )
        campaign = dataclasses.replace(
            a_message(
                account, message_id=mid(account, "c"), template_id="welcome", created_at=t(2)
            ),
            campaign_id="cmp_one",
        )
        plain = a_message(account, message_id=mid(account, "p"), created_at=t(3))
        await stored(storage, welcome, campaign, plain)

        def listed(**given: str) -> MessageQuery:
            return MessageQuery.parse(**given)  # type: ignore[arg-type]

        messages = storage.messages
        assert ids(await messages.list(account, listed(template_id="welcome"), WIDE)) == [
            "c",
            "w",
        ]
        assert ids(await messages.list(account, listed(campaign_id="cmp_one"), WIDE)) == ["c"]
        assert ids(await messages.list(account, listed(template_id="other"), WIDE)) == []
        middle = listed(
            created_after=(T0 + timedelta(seconds=1)).isoformat(),
            created_before=(T0 + timedelta(seconds=3)).isoformat(),
        )
        assert ids(await messages.list(account, middle, WIDE)) == ["c"]  # both strict
        both = listed(to="ada@example.com", template_id="welcome")
        assert ids(await messages.list(account, both, WIDE)) == ["c", "w"]
        [found] = (await messages.list(account, listed(campaign_id="cmp_one"), WIDE)).messages
        assert found.campaign_id == "cmp_one"

    async def test_a_status_filter_walks_at_most_the_window_and_says_where_it_stopped(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        made = [
            a_message(account, message_id=mid(account, f"{i:02}"), created_at=t(i))
            for i in range(10)
        ]
        failed = {mid(account, "08"), mid(account, "02")}
        made = [
            m.failed("no", 1, m.created_at) if m.message_id in failed else m.sent("p", 1, T0)
            for m in made
        ]
        await stored(storage, *made)
        query = MessageQuery.parse(status="failed", limit=5)

        # The newest 4 hold one failure: the walk stops at the 4th (msg_06).
        rows = await storage.messages.list(account, query, 4)

        assert ids(rows) == ["08"]
        assert rows.walked_to == PageCursor(made[6].created_at, mid(account, "06"))
        page = page_of(rows, query.limit)
        assert page.next_cursor == PageCursor(made[6].created_at, mid(account, "06")).encode()
        rest = MessageQuery.parse(status="failed", limit=5, cursor=page.next_cursor)
        further = await storage.messages.list(account, rest, 4)
        assert ids(further) == ["02"]
        assert further.walked_to is not None  # the window ran out again, at msg_02
        last = MessageQuery.parse(status="failed", limit=5, cursor=page_of(further, 5).next_cursor)
        end = await storage.messages.list(account, last, 4)
        assert (ids(end), end.walked_to) == ([], None)  # two left: the walk ended first
        # With a window that holds them all, one page.
        assert ids(await storage.messages.list(account, query, WIDE)) == ["08", "02"]
        sent = MessageQuery.parse(status="sent", limit=3)
        assert ids(await storage.messages.list(account, sent, WIDE)) == [
            "09",
            "07",
            "06",
            "05",
        ]

    async def test_only_the_accounts_own_messages(self, storage: Storage) -> None:
        mine, theirs = await storage.new_account(), await storage.new_account()
        await stored(storage, a_message(theirs, to=("ada@example.com",), template_id="welcome"))

        for query in (
            MessageQuery(),
            MessageQuery.parse(to="ada@example.com"),
            MessageQuery.parse(template_id="welcome"),
            MessageQuery.parse(status="pending"),
        ):
            assert (await storage.messages.list(mine, query, WIDE)).messages == []

    async def test_a_message_status_update_keeps_it_listed(self, storage: Storage) -> None:
        account = await storage.new_account()
        [message] = await stored(storage, a_message(account, to=("ada@example.com",)))
        await storage.messages.update([message.sent("prov-1", 1, T0)])

        query = MessageQuery.parse(to="ada@example.com", status="sent")
        [found] = (await storage.messages.list(account, query, WIDE)).messages

        assert (found.message_id, found.status) == (message.message_id, MessageStatus.SENT)
