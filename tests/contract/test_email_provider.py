"""The EmailProvider contract (ports/mail.py), run against every implementation.

Each test names the implementations it applies to (tests/contract/mail_support.py): every
one accepts messages and can be closed; those whose provider can be scripted (the HTTP
provider per dialect against the stand-in, the recording provider) refuse and are
unavailable on cue; only an HTTP provider can be cut off, kept waiting, find nobody
listening or be answered without an id; only a provider with an idempotency key (Resend)
gets our message id as one.
"""

from __future__ import annotations

import pytest

from leadmail.domain.delivery import ProviderRejected, ProviderUnavailable
from tests.contract.mail_support import (
    EVERY,
    HTTP,
    IDEMPOTENT,
    SCRIPTED,
    UNAVAILABLE,
    Harness,
    HttpHarness,
    unavailable_cases,
)
from tests.support.mail import EMAIL, failure_of

every = pytest.mark.parametrize("mail", EVERY, indirect=True)
scripted = pytest.mark.parametrize("mail", SCRIPTED, indirect=True)
over_http = pytest.mark.parametrize("mail", HTTP, indirect=True)
idempotent = pytest.mark.parametrize("mail", IDEMPOTENT, indirect=True)

# Not now, with the provider there to take the next message at once: not after a timeout
# (the provider under test then waits only SHORT_TIMEOUT), nor with nobody listening.
PASSING = [
    (kind, how)
    for kind, how in unavailable_cases()
    if how not in ("no answer in time", "nobody listening")
]


class TestEmailProviderContract:
    # --- accepted ----------------------------------------------------------------------

    @every
    def test_the_name_is_the_configured_name(self, mail: Harness) -> None:
        assert mail.provider.name == mail.name

    @every
    async def test_an_accepted_message_returns_the_providers_id(self, mail: Harness) -> None:
        provider_id = await mail.provider.send(EMAIL, message_id="msg_accepted")

        assert provider_id is not None
        assert provider_id == mail.issued_id("msg_accepted")

    @every
    async def test_each_accepted_message_gets_its_own_id(self, mail: Harness) -> None:
        ids = [await mail.provider.send(EMAIL, message_id=f"msg_{i}") for i in range(3)]

        assert None not in ids
        assert len(set(ids)) == 3

    @over_http
    async def test_an_accepted_message_without_an_id_returns_none(self, mail: Harness) -> None:
        # Accepted all the same: the message went out, only the provider's id is unknown.
        assert isinstance(mail, HttpHarness)
        mail.accept_without_an_id_next()

        assert await mail.provider.send(EMAIL, message_id="msg_no_id") is None
        assert mail.issued_id("msg_no_id") is None

    # --- refused: ProviderRejected -----------------------------------------------------

    @scripted
    @pytest.mark.parametrize("status", [400, 401, 403, 422])
    async def test_a_refusal_is_rejected_with_the_providers_own_words(
        self, mail: Harness, status: int
    ) -> None:
        mail.refuse_next(status, "The domain school.example is not verified.")

        error = await failure_of(mail.provider, "msg_refused")

        assert isinstance(error, ProviderRejected)
        assert error.status == status
        assert "The domain school.example is not verified." in error.detail
        # A refusal is about one message: the next one goes through.
        provider_id = await mail.provider.send(EMAIL, message_id="msg_next")
        assert provider_id == mail.issued_id("msg_next")

    # --- not now: ProviderUnavailable --------------------------------------------------

    @pytest.mark.parametrize(("mail", "how"), unavailable_cases(), indirect=["mail"])
    async def test_not_now_is_unavailable_with_the_retry_after_asked_for(
        self, mail: Harness, how: str
    ) -> None:
        mail.unavailable_next(how)

        error = await failure_of(mail.provider, "msg_later")

        assert isinstance(error, ProviderUnavailable)
        assert error.retry_after == UNAVAILABLE[how]

    @pytest.mark.parametrize(("mail", "how"), PASSING, indirect=["mail"])
    async def test_after_not_now_the_next_message_goes_through(
        self, mail: Harness, how: str
    ) -> None:
        mail.unavailable_next(how)
        await failure_of(mail.provider, "msg_later")

        provider_id = await mail.provider.send(EMAIL, message_id="msg_later")

        assert provider_id is not None
        assert provider_id == mail.issued_id("msg_later")

    # --- our message id ----------------------------------------------------------------

    @idempotent
    async def test_the_message_id_is_the_idempotency_key_of_every_attempt(
        self, mail: Harness
    ) -> None:
        mail.unavailable_next("503")
        await failure_of(mail.provider, "msg_same")  # the first attempt, not now
        await mail.provider.send(EMAIL, message_id="msg_same")  # its retry
        await mail.provider.send(EMAIL, message_id="msg_other")

        assert mail.idempotency_keys() == ["msg_same", "msg_same", "msg_other"]

    # --- close -------------------------------------------------------------------------

    @every
    @pytest.mark.parametrize("sends", [0, 2])
    async def test_close_can_be_called_whether_used_or_not(self, mail: Harness, sends: int) -> None:
        for i in range(sends):
            await mail.provider.send(EMAIL, message_id=f"msg_{i}")

        await mail.close()  # returns None, raises nothing

        assert await mail.released()
