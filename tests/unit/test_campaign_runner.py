"""The campaign runner on the memory adapters and the recording provider: every recipient
sent once, in batches keyed by their batch id, rendered with the lead's values over the
campaign's; the rate acquired right before each request; refusals, retries and 429 holds; skipped
recipients; pause, cancel and stop between batches; expired leases; done and failed."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from leadmail.adapters.memory.jobs import InProcessJobQueue
from leadmail.domain.campaign_recipients import LEAD_DELETED, STOPPED, lacks_variable
from leadmail.domain.campaigns import CampaignCounts, CampaignStatus, RecipientStatus
from leadmail.domain.delivery import BatchItem, ProviderRejected, ProviderUnavailable
from leadmail.domain.email import Mailbox, MessageStatus, OutgoingEmail
from leadmail.domain.quotas import QuotaExceeded, next_day_start
from leadmail.domain.suppressions import Suppression, SuppressionReason, suppression_address
from leadmail.services.campaigns import QUOTA_RESUME_JOB
from tests.unit.fakes import START
from tests.unit.runner_rig import ACCOUNT, LEASE, RecordingLimiter, campaign_settings, runner_rig

R = SuppressionReason


async def test_every_recipient_once_in_batches_keyed_by_their_batch_id(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    await rig.lead("ada@example.com", "Ada Lovelace", city="London")  # her own city wins
    for n in range(6):
        await rig.lead(f"l{n}@example.com", f"Lead {n}")
    campaign_id = await rig.start(reply_to="Office <office@example.com>")

    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert view.campaign.status is CampaignStatus.DONE
    assert view.counts == CampaignCounts(sent=7)
    delivered = rig.provider.delivered
    assert sorted(d.email.to[0].address for d in delivered) == sorted(
        ["ada@example.com", *(f"l{n}@example.com" for n in range(6))]
    )
    assert len(rig.provider.batch_keys) == 3  # 3 + 3 + 1
    ada = next(d.email for d in delivered if d.email.to[0].address == "ada@example.com")
    assert ada.to[0].name == "Ada Lovelace"
    assert ada.subject == "Hi Ada, from Northwind"
    assert "Dear Ada Lovelace, see you in London at Northwind." in ada.html
    assert ada.reply_to is not None
    assert ada.reply_to.address == "office@example.com"
    assert ada.sender.address == "team@example.com"
    page = await rig.adapters.recipients.page(campaign_id, None, 10)
    assert {r.batch_id for r in page} == set(rig.provider.batch_keys)
    for recipient in page:  # each one's message opens, sent, as a row of the template
        assert recipient.message_id is not None
        message = await rig.adapters.messages.get(ACCOUNT, recipient.message_id)
        assert message is not None
        assert (message.status, message.template_id, message.attempts) == (
            MessageStatus.SENT, "hello", 1,
        )  # fmt: skip
    assert {d.message_id for d in delivered} == {r.message_id for r in page}


async def test_the_rate_is_acquired_right_before_each_request(tmp_path: Path) -> None:
    """After the batch's messages are stored, not before its lease: the moments the
    limiter counts are those the provider sees (no lease, render or store between)."""
    rig = await runner_rig(tmp_path)
    for n in range(7):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()

    await rig.run(campaign_id)

    requests = [i for i, e in enumerate(rig.events) if e.startswith("request")]
    assert len(requests) == 3
    for i in requests:  # the request's acquire just before it, its store just before that
        assert rig.events[i - 1] == "acquire email:recording", rig.events
        assert rig.events[i - 2].startswith("store"), rig.events
    assert rig.events.count("acquire email:recording") == 3  # none for the empty lease


async def test_one_message_refused_fails_alone(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(3):
        await rig.lead(f"l{n}@example.com")
    rig.provider.fail_for("l1@example.com", ProviderRejected(422, "inactive recipient"))
    campaign_id = await rig.start()

    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert (view.campaign.status, view.counts) == (
        CampaignStatus.DONE, CampaignCounts(sent=2, failed=1),
    )  # fmt: skip
    [failed] = await rig.adapters.recipients.page(campaign_id, RecipientStatus.FAILED, 10)
    assert failed.email == "l1@example.com"
    assert "inactive recipient" in failed.error
    assert failed.message_id is not None
    message = await rig.adapters.messages.get(ACCOUNT, failed.message_id)
    assert message is not None
    assert message.status is MessageStatus.FAILED


async def test_5xx_is_retried_with_the_same_key(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(2):
        await rig.lead(f"l{n}@example.com")
    rig.provider.fail_next(ProviderUnavailable("answered 503", status=503), times=2)
    campaign_id = await rig.start()

    await rig.run(campaign_id)

    assert (await rig.campaigns.get(ACCOUNT, campaign_id)).counts == CampaignCounts(sent=2)
    keys = rig.provider.batch_keys
    assert len(keys) == 3
    assert len(set(keys)) == 1
    assert keys[0].startswith("bat_")
    # One per request, the two retries' included.
    assert [e for e in rig.events if e.startswith("acquire")] == ["acquire email:recording"] * 3
    [message] = {d.message_id for d in rig.provider.delivered[:1]}
    stored = await rig.adapters.messages.get(ACCOUNT, message)
    assert stored is not None
    assert stored.attempts == 3


async def test_a_429_holds_the_lane_then_the_batch_is_sent(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    await rig.lead("l0@example.com")
    rig.provider.fail_next(ProviderUnavailable("answered 429", retry_after=1.5, status=429))
    campaign_id = await rig.start()

    await rig.run(campaign_id)

    limiter = rig.limiter
    assert isinstance(limiter, RecordingLimiter)
    assert limiter.holds == [("email:recording", 1.5)]
    held = rig.events.index("hold email:recording 1.5")
    assert rig.events[held + 1 :][:2] == ["acquire email:recording", "request 1"]
    assert (await rig.campaigns.get(ACCOUNT, campaign_id)).counts == CampaignCounts(sent=1)


async def test_giving_up_after_the_retries_fails_the_batch(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    await rig.lead("l0@example.com")
    rig.provider.fail_next(ProviderUnavailable("answered 502", status=502), times=4)
    campaign_id = await rig.start()

    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert (view.campaign.status, view.counts) == (
        CampaignStatus.DONE, CampaignCounts(failed=1),
    )  # fmt: skip
    assert rig.provider.attempts == 4


async def test_recipients_it_cannot_render_are_skipped(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    await rig.lead("ok@example.com", city="York")
    await rig.lead("lacks@example.com")  # no city, and `variables` gives none
    gone = await rig.lead("gone@example.com", city="York")
    await rig.lead("broken@example.com", city="York", first_name="Ada\nBcc: x@example.com")
    campaign_id = await rig.start(variables={"school": "Northwind"})
    await rig.adapters.leads.delete(ACCOUNT, gone.lead_id)

    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert (view.campaign.status, view.counts) == (
        CampaignStatus.DONE, CampaignCounts(sent=1, skipped=3),
    )  # fmt: skip
    skipped = {
        r.email: (r.error, r.message_id)
        for r in await rig.adapters.recipients.page(campaign_id, RecipientStatus.SKIPPED, 10)
    }
    assert skipped["lacks@example.com"] == (lacks_variable("city"), None)
    assert skipped["gone@example.com"] == (LEAD_DELETED, None)
    assert "first_name" in skipped["broken@example.com"][0]
    assert [d.email.to[0].address for d in rig.provider.delivered] == ["ok@example.com"]


async def test_suppressed_recipients_are_never_sent_whatever_the_reason(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(5):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()
    for n, reason in enumerate([R.UNSUBSCRIBED, R.MANUAL, R.BOUNCED]):  # after the start
        address = suppression_address(f"L{n}@Example.com")
        await rig.adapters.suppressions.add(Suppression.of(ACCOUNT, address, reason, START))
    other = suppression_address("l3@example.com")  # another account's list changes nothing
    await rig.adapters.suppressions.add(Suppression.of("acc_other", other, R.MANUAL, START))

    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert (view.campaign.status, view.counts) == (
        CampaignStatus.DONE, CampaignCounts(sent=2, suppressed=3),
    )  # fmt: skip
    held = await rig.adapters.recipients.page(campaign_id, RecipientStatus.SUPPRESSED, 10)
    assert sorted(r.email for r in held) == ["l0@example.com", "l1@example.com", "l2@example.com"]
    assert all("suppression list" in r.error and r.message_id is None for r in held)
    sent = sorted(d.email.to[0].address for d in rig.provider.delivered)
    assert sent == ["l3@example.com", "l4@example.com"]


async def test_a_campaign_whose_sender_is_no_longer_allowed_fails_unsent(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(4):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()  # from team@example.com, allowed: no sender domains yet
    await rig.adapters.sender_domains.add(ACCOUNT, "school.example", START)
    rig.services.sender_rules.forget(ACCOUNT)  # (another process: within its cache's age)

    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert view.campaign.status is CampaignStatus.FAILED
    assert "example.com" in view.campaign.failure_reason
    assert view.counts == CampaignCounts(cancelled=4)
    assert rig.provider.delivered == []


async def test_pause_between_batches_stops_new_requests_and_resume_sends_the_rest(
    tmp_path: Path,
) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(9):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()

    async def pause_at_first(_: Sequence[BatchItem]) -> None:
        if rig.provider.attempts == 0:
            await rig.campaigns.pause(ACCOUNT, campaign_id)
            await asyncio.sleep(0.05)  # the status is read again meanwhile

    rig.provider.before = pause_at_first
    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert view.campaign.status is CampaignStatus.PAUSED
    assert view.counts == CampaignCounts(sent=3, pending=6)  # the batch at the provider
    assert len(rig.provider.delivered) == 3

    rig.provider.before = None
    await rig.campaigns.resume(ACCOUNT, campaign_id)
    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert (view.campaign.status, view.counts) == (CampaignStatus.DONE, CampaignCounts(sent=9))
    addresses = [d.email.to[0].address for d in rig.provider.delivered]
    assert sorted(addresses) == sorted(f"l{n}@example.com" for n in range(9))


async def test_cancel_marks_the_rest_cancelled(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(9):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()

    async def cancel_at_second(_: Sequence[BatchItem]) -> None:
        if rig.provider.attempts == 1:
            await rig.campaigns.cancel(ACCOUNT, campaign_id)

    rig.provider.before = cancel_at_second
    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert view.campaign.status is CampaignStatus.CANCELLED
    assert view.counts == CampaignCounts(sent=6, cancelled=3)
    assert len(rig.provider.delivered) == 6


async def test_a_429_while_paused_hands_the_batch_back(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(3):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()
    rig.provider.fail_next(ProviderUnavailable("answered 429", retry_after=0.01, status=429))

    async def pause_first(_: Sequence[BatchItem]) -> None:
        if rig.provider.attempts == 0:
            await rig.campaigns.pause(ACCOUNT, campaign_id)

    rig.provider.before = pause_first
    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert view.counts == CampaignCounts(pending=3)
    assert rig.provider.attempts == 1  # no retry once paused
    recipients = await rig.adapters.recipients.page(campaign_id, None, 10)
    assert {(r.status, r.message_id) for r in recipients} == {(RecipientStatus.PENDING, None)}


async def test_stop_lets_the_batch_at_the_provider_finish_and_record(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(9):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()
    rig.provider.delay = 0.2
    running = asyncio.create_task(rig.run(campaign_id))
    while rig.provider.in_flight == 0:
        await asyncio.sleep(0.005)

    assert await rig.runner.stop(5.0)
    await running

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert view.campaign.status is CampaignStatus.RUNNING  # the rest is for a restart
    assert view.counts == CampaignCounts(sent=3, pending=6)
    page = await rig.adapters.recipients.page(campaign_id, RecipientStatus.PENDING, 10)
    assert {r.status for r in page} == {RecipientStatus.PENDING}  # none left sending


async def test_an_expired_batch_is_retried_with_its_key_when_the_provider_keeps_it(
    tmp_path: Path,
) -> None:
    rig = await runner_rig(tmp_path, keeps_idempotency=True)
    for n in range(5):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()
    now = rig.clock.now  # a worker leases a batch, then dies before recording
    dead = await rig.adapters.recipients.lease(campaign_id, 3, now=now, lease_until=now + LEASE)
    assert dead is not None
    rig.clock.advance(LEASE * 2)

    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert (view.campaign.status, view.counts) == (CampaignStatus.DONE, CampaignCounts(sent=5))
    assert dead.batch_id in rig.provider.batch_keys
    sent = {d.message_id for d in rig.provider.delivered}
    assert {r.message_id for r in dead.recipients} <= sent  # the same message ids
    assert len(rig.provider.delivered) == 5


async def test_a_retry_refused_for_its_reused_key_leaves_the_batch_unknown(
    tmp_path: Path,
) -> None:
    """A dead worker's batch landed; one of its leads is deleted before the retry, so the
    retry is another batch under the same key: Resend refuses it (409). Nobody is sent
    twice, and nobody is reported failed who may have been sent."""
    rig = await runner_rig(tmp_path, keeps_idempotency=True)
    leads = [await rig.lead(f"l{n}@example.com") for n in range(5)]
    campaign_id = await rig.start()
    now = rig.clock.now
    dead = await rig.adapters.recipients.lease(campaign_id, 3, now=now, lease_until=now + LEASE)
    assert dead is not None
    assert all(r.message_id is not None for r in dead.recipients)
    landed = [
        BatchItem(OutgoingEmail(Mailbox("team@example.com"), (Mailbox(r.email),), "Hi", "<p/>"),
                  r.message_id)
        for r in dead.recipients if r.message_id is not None
    ]  # fmt: skip
    await rig.provider.send_batch(landed, batch_key=dead.batch_id)  # ... then it died
    gone = next(lead for lead in leads if lead.lead_id == dead.recipients[0].lead_id)
    await rig.adapters.leads.delete(ACCOUNT, gone.lead_id)
    rig.clock.advance(LEASE * 2)

    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert (view.campaign.status, view.counts) == (
        CampaignStatus.DONE, CampaignCounts(sent=2, skipped=1, unknown=2),
    )  # fmt: skip
    addresses = [d.email.to[0].address for d in rig.provider.delivered]
    assert sorted(addresses) == [f"l{n}@example.com" for n in range(5)]  # each once
    unknown = await rig.adapters.recipients.page(campaign_id, RecipientStatus.UNKNOWN, 10)
    assert len(unknown) == 2
    assert all("refused the retry" in r.error and "409" in r.error for r in unknown)


async def test_an_expired_batch_is_unknown_when_the_provider_keeps_no_key(
    tmp_path: Path,
) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(5):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()
    now = rig.clock.now
    dead = await rig.adapters.recipients.lease(campaign_id, 3, now=now, lease_until=now + LEASE)
    assert dead is not None

    running = asyncio.create_task(rig.run(campaign_id))
    await asyncio.sleep(0.1)  # the rest is sent; the dead batch's lease holds it
    assert not running.done()
    assert len(rig.provider.delivered) == 2
    rig.clock.advance(LEASE * 2)
    await running

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert (view.campaign.status, view.counts) == (
        CampaignStatus.DONE, CampaignCounts(sent=2, unknown=3),
    )  # fmt: skip
    unknown = await rig.adapters.recipients.page(campaign_id, RecipientStatus.UNKNOWN, 10)
    assert {r.error for r in unknown} == {STOPPED}
    assert len(rig.provider.delivered) == 2  # never sent again


async def test_the_campaign_fails_when_its_template_is_gone_and_cancels_the_rest(
    tmp_path: Path,
) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(5):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()
    (rig.catalog / "hello.html").unlink()
    await rig.services.templates.sync()

    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    reason = "the template 'hello' no longer exists"
    assert (view.campaign.status, view.campaign.failure_reason) == (CampaignStatus.FAILED, reason)
    assert view.counts == CampaignCounts(cancelled=5)  # they add up: none left pending
    recipients = await rig.adapters.recipients.page(campaign_id, None, 10)
    assert {(r.status, r.error, r.message_id) for r in recipients} == {
        (RecipientStatus.CANCELLED, f"not sent: the campaign failed ({reason})", None)
    }
    assert rig.provider.attempts == 0


async def test_one_message_per_request_keeps_several_at_the_provider(tmp_path: Path) -> None:
    settings = campaign_settings(batch=1, in_flight=8)
    rig = await runner_rig(tmp_path, settings=settings, batch_limit=1)
    for n in range(20):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()
    rig.provider.delay = 0.02

    await rig.run(campaign_id)

    assert (await rig.campaigns.get(ACCOUNT, campaign_id)).counts == CampaignCounts(sent=20)
    assert rig.provider.most_in_flight == 8


async def test_a_second_job_for_a_campaign_this_process_sends_only_wakes_it(
    tmp_path: Path,
) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(9):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()
    rig.provider.delay = 0.05
    first = asyncio.create_task(rig.run(campaign_id))
    await asyncio.sleep(0.01)

    await rig.run(campaign_id)  # returns at once
    assert not first.done()
    await first

    assert len(rig.provider.delivered) == 9
    assert rig.provider.most_in_flight == 1
    assert await rig.status(campaign_id) is CampaignStatus.DONE


async def test_a_worker_joins_the_running_campaigns_it_does_not_send(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(4):
        await rig.lead(f"l{n}@example.com")
    campaign_id = await rig.start()  # its job queued elsewhere: never run here
    joining = asyncio.create_task(rig.runner.keep_joining(every=0.01))
    try:
        async with asyncio.timeout(5):
            while await rig.status(campaign_id) is not CampaignStatus.DONE:
                await asyncio.sleep(0.01)
    finally:
        await rig.runner.stop(1.0)
        joining.cancel()
        await asyncio.gather(joining, return_exceptions=True)

    assert len(rig.provider.delivered) == 4


async def test_the_daily_quota_pauses_a_campaign_that_resumes_the_next_day(
    tmp_path: Path,
) -> None:
    rig = await runner_rig(tmp_path)
    for n in range(6):
        await rig.lead(f"l{n}@example.com", f"Lead {n}")
    await rig.services.quota.set(ACCOUNT, 4)  # batches of 3: the second does not fit
    campaign_id = await rig.start()

    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert (view.campaign.status, view.campaign.paused_reason) == (CampaignStatus.PAUSED, "quota")
    assert (view.counts.sent, view.counts.pending) == (3, 3)
    tomorrow = next_day_start(rig.clock.now)
    jobs = rig.adapters.jobs
    assert isinstance(jobs, InProcessJobQueue)
    assert (QUOTA_RESUME_JOB, campaign_id, tomorrow) in jobs.waiting()
    with pytest.raises(QuotaExceeded):  # a client's resume waits for tomorrow too
        await rig.campaigns.resume(ACCOUNT, campaign_id)
    assert (await rig.services.quota.use(ACCOUNT)).sent == 3  # the refused batch: not counted

    rig.clock.now = tomorrow
    await rig.campaigns.resume_after_quota(campaign_id)
    await rig.run(campaign_id)

    view = await rig.campaigns.get(ACCOUNT, campaign_id)
    assert view.campaign.status is CampaignStatus.DONE
    assert view.campaign.paused_reason == ""
    assert view.counts.sent == 6
    assert len(rig.provider.delivered) == 6


async def test_a_campaign_paused_by_hand_is_not_resumed_by_the_quota_job(tmp_path: Path) -> None:
    rig = await runner_rig(tmp_path)
    await rig.lead("l0@example.com")
    campaign_id = await rig.start()
    paused = await rig.campaigns.pause(ACCOUNT, campaign_id)
    assert paused.campaign.paused_reason == "manual"

    await rig.campaigns.resume_after_quota(campaign_id)

    assert await rig.status(campaign_id) is CampaignStatus.PAUSED
