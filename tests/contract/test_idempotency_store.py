"""The IdempotencyStore contract (ports/messages.py), run against every adapter."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

from leadmail.domain.idempotency import KEEP_FOR, Claim, ClaimState, new_claim_token
from tests.contract.support import T0, Storage, a_claim, is_utc, moment


async def stored(storage: Storage, claim: Claim) -> Claim:
    """The claim now held on ``claim``'s key, read the only way the port allows: by trying to
    claim it again (which loses while the held one is unexpired)."""
    probe = dataclasses.replace(claim, token=new_claim_token(), fingerprint="probe")
    held = await storage.claims.claim(probe)
    assert held.token != probe.token, "the probe must not win: the key was held"
    return held


class TestIdempotencyStoreContract:
    # --- claim ---------------------------------------------------------------------------

    async def test_the_first_claim_wins_and_is_stored_as_given(self, storage: Storage) -> None:
        account = await storage.new_account()
        claim = a_claim(account, key="order-42 \"quoted\" 'single' \\ %_ " + "k" * 200)

        held = await storage.claims.claim(claim)

        assert held == claim
        assert is_utc(held.created_at)
        assert is_utc(held.updated_at)
        assert await stored(storage, claim) == claim

    async def test_a_second_claim_gets_the_first(self, storage: Storage) -> None:
        account = await storage.new_account()
        first = a_claim(account, key="k1")
        second = dataclasses.replace(
            a_claim(account, key="k1", created_at=moment(1000)), fingerprint="0" * 64
        )

        await storage.claims.claim(first)
        held = await storage.claims.claim(second)

        assert held == first
        assert held.token != second.token

    async def test_concurrent_claims_of_one_key_have_exactly_one_winner(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        claims = [a_claim(account, key="same-key", created_at=moment(i)) for i in range(10)]

        held = await asyncio.gather(*(storage.claims.claim(c) for c in claims))

        winners = [c for c, h in zip(claims, held, strict=True) if h.token == c.token]
        assert len(winners) == 1
        assert held == [winners[0]] * 10

    async def test_an_expired_claim_is_replaced(self, storage: Storage) -> None:
        account = await storage.new_account()
        old = a_claim(account, key="k")
        await storage.claims.claim(old)
        await storage.claims.attach(old, ["msg_old"], moment(10))
        await storage.claims.finish(old, moment(20))
        new = dataclasses.replace(a_claim(account, key="k", created_at=T0 + KEEP_FOR))

        held = await storage.claims.claim(new)

        assert held == new
        assert await stored(storage, new) == new

    async def test_a_claim_just_short_of_expiry_is_kept(self, storage: Storage) -> None:
        account = await storage.new_account()
        old = a_claim(account, key="k")
        await storage.claims.claim(old)
        late = a_claim(account, key="k", created_at=T0 + KEEP_FOR - timedelta(milliseconds=1))

        assert await storage.claims.claim(late) == old

    async def test_concurrent_claims_on_an_expired_key_have_exactly_one_winner(
        self, storage: Storage
    ) -> None:
        account = await storage.new_account()
        await storage.claims.claim(a_claim(account, key="k"))
        later = T0 + KEEP_FOR + timedelta(hours=1)
        claims = [a_claim(account, key="k", created_at=later) for _ in range(10)]

        held = await asyncio.gather(*(storage.claims.claim(c) for c in claims))

        winners = [c for c, h in zip(claims, held, strict=True) if h.token == c.token]
        assert len(winners) == 1
        assert held == [winners[0]] * 10

    async def test_claims_of_two_accounts_on_one_key_are_independent(
        self, storage: Storage
    ) -> None:
        one, two = await storage.new_account(), await storage.new_account()
        mine = a_claim(one, key="shared-key")
        theirs = a_claim(two, key="shared-key")

        assert await storage.claims.claim(mine) == mine
        assert await storage.claims.claim(theirs) == theirs
        await storage.claims.finish(theirs, moment(5))

        assert await stored(storage, mine) == mine

    # --- reclaim -------------------------------------------------------------------------

    async def test_reclaim_takes_over_under_a_new_token(self, storage: Storage) -> None:
        account = await storage.new_account()
        claim = await storage.claims.claim(a_claim(account))
        await storage.claims.attach(claim, ["msg_a", "msg_b"], moment(10))
        await storage.claims.finish(claim, moment(20))
        existing = await stored(storage, claim)
        token = new_claim_token()

        taken = await storage.claims.reclaim(existing, token, moment(30))

        expected = dataclasses.replace(
            existing, token=token, state=ClaimState.RUNNING, updated_at=moment(30)
        )
        assert taken == expected
        assert taken.message_ids == ("msg_a", "msg_b")
        assert taken.created_at == T0
        assert await stored(storage, claim) == expected

    async def test_reclaim_of_a_changed_claim_is_none(self, storage: Storage) -> None:
        account = await storage.new_account()
        claim = await storage.claims.claim(a_claim(account))
        first = await storage.claims.reclaim(claim, new_claim_token(), moment(10))
        assert first is not None

        again = await storage.claims.reclaim(claim, new_claim_token(), moment(20))

        assert again is None
        assert await stored(storage, claim) == first

    async def test_reclaim_of_a_key_never_claimed_is_none(self, storage: Storage) -> None:
        account = await storage.new_account()

        assert await storage.claims.reclaim(a_claim(account), new_claim_token(), T0) is None

    async def test_reclaim_matches_account_and_key_not_token_alone(self, storage: Storage) -> None:
        one, two = await storage.new_account(), await storage.new_account()
        claim = await storage.claims.claim(a_claim(one, key="k"))
        elsewhere = dataclasses.replace(claim, account_id=two)

        assert await storage.claims.reclaim(elsewhere, new_claim_token(), moment(5)) is None
        assert await stored(storage, claim) == claim

    async def test_concurrent_reclaims_have_exactly_one_winner(self, storage: Storage) -> None:
        account = await storage.new_account()
        claim = await storage.claims.claim(a_claim(account))
        tokens = [new_claim_token() for _ in range(10)]

        taken = await asyncio.gather(
            *(storage.claims.reclaim(claim, t, moment(10)) for t in tokens)
        )

        won = [t for t in taken if t is not None]
        assert len(won) == 1
        assert won[0].token in tokens
        assert await stored(storage, claim) == won[0]

    # --- attach and finish ---------------------------------------------------------------

    async def test_attach_records_the_messages_in_order(self, storage: Storage) -> None:
        account = await storage.new_account()
        claim = await storage.claims.claim(a_claim(account))

        await storage.claims.attach(claim, ["msg_b", "msg_a", "msg_c"], moment(100))

        assert await stored(storage, claim) == dataclasses.replace(
            claim, message_ids=("msg_b", "msg_a", "msg_c"), updated_at=moment(100)
        )

    async def test_attach_again_replaces_the_messages(self, storage: Storage) -> None:
        account = await storage.new_account()
        claim = await storage.claims.claim(a_claim(account))
        await storage.claims.attach(claim, ["msg_1"], moment(100))

        await storage.claims.attach(claim, ["msg_2", "msg_3"], moment(200))

        held = await stored(storage, claim)
        assert held.message_ids == ("msg_2", "msg_3")
        assert held.updated_at == moment(200)

    async def test_finish_marks_the_claim_finished(self, storage: Storage) -> None:
        account = await storage.new_account()
        claim = await storage.claims.claim(a_claim(account))
        await storage.claims.attach(claim, ["msg_1"], moment(100))

        await storage.claims.finish(claim, moment(200))

        assert await stored(storage, claim) == dataclasses.replace(
            claim, state=ClaimState.FINISHED, message_ids=("msg_1",), updated_at=moment(200)
        )

    async def test_a_claim_taken_over_can_no_longer_write(self, storage: Storage) -> None:
        # The first holder, slow but alive, must not overwrite what the new holder records.
        account = await storage.new_account()
        claim = await storage.claims.claim(a_claim(account))
        taken = await storage.claims.reclaim(claim, new_claim_token(), moment(10))
        assert taken is not None

        await storage.claims.attach(claim, ["msg_stale"], moment(20))
        await storage.claims.finish(claim, moment(30))

        assert await stored(storage, claim) == taken

    async def test_the_new_holder_writes_after_a_reclaim(self, storage: Storage) -> None:
        account = await storage.new_account()
        claim = await storage.claims.claim(a_claim(account))
        taken = await storage.claims.reclaim(claim, new_claim_token(), moment(10))
        assert taken is not None

        await storage.claims.attach(taken, ["msg_new"], moment(20))
        await storage.claims.finish(taken, moment(30))

        assert await stored(storage, claim) == dataclasses.replace(
            taken, state=ClaimState.FINISHED, message_ids=("msg_new",), updated_at=moment(30)
        )
