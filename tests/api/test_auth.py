"""Every lead endpoint wants 'Authorization: Bearer <API_KEY>'; anything else is a 401."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.support import Api
from tests.support.envelope import LEADS, assert_error, assert_ok, bearer

# method, path (with {id} standing for an existing lead), JSON body
ENDPOINTS: list[tuple[str, str, dict[str, str] | None]] = [
    ("GET", LEADS, None),
    ("POST", LEADS, {"name": "Grace", "email": "grace@example.com"}),
    ("GET", LEADS + "/{id}", None),
    ("PUT", LEADS + "/{id}", {"note": "changed"}),
    ("DELETE", LEADS + "/{id}", None),
]
ENDPOINT_IDS = [f"{m} {p}" for m, p, _ in ENDPOINTS]

UNKNOWN_KEY = "lm_" + "A" * 43  # the right shape, never issued

# id -> Authorization header value (None: no header; "<revoked>": a revoked key's)
BAD_CREDENTIALS: dict[str, str | None] = {
    "missing": None,
    "basic-scheme": "Basic YWRtaW46YWRtaW4=",
    "empty-bearer": "Bearer ",
    "bare-scheme": "Bearer",
    "malformed-key": "Bearer not-a-key",
    "unknown-key": f"Bearer {UNKNOWN_KEY}",
    "revoked-key": "<revoked>",
    "key-and-junk": "<valid> extra",
}


async def _credential(api: Api, template: str | None) -> dict[str, str]:
    if template is None:
        return {}
    if template == "<revoked>":
        revoked = await api.services.keys.create("acme", "to be revoked")
        await api.services.keys.revoke(revoked.key.key_id)
        return bearer(revoked.secret)
    return {"Authorization": template.replace("<valid>", api.key.secret)}


@pytest.mark.parametrize("credential", list(BAD_CREDENTIALS.values()), ids=list(BAD_CREDENTIALS))
@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=ENDPOINT_IDS)
async def test_bad_credentials_get_401_with_bearer_challenge_and_change_nothing(
    api: Api, method: str, path: str, body: dict[str, str] | None, credential: str | None
) -> None:
    lead = await api.add_lead()
    before = await api.all_leads()
    headers = await _credential(api, credential)

    response = await api.client.request(
        method, path.format(id=lead["lead_id"]), json=body, headers=headers
    )

    assert_error(response, 401, "UNAUTHORIZED")
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert await api.all_leads() == before


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=ENDPOINT_IDS)
async def test_an_unknown_lead_id_without_a_key_is_401_not_404(
    api: Api, method: str, path: str, body: dict[str, str] | None
) -> None:
    response = await api.client.request(method, path.format(id="ld_nope"), json=body)

    assert_error(response, 401, "UNAUTHORIZED")


async def test_the_401_error_says_what_is_wrong(api: Api) -> None:
    missing = assert_error(await api.client.get(LEADS), 401, "UNAUTHORIZED")
    revoked = await api.services.keys.create("acme", "old")
    await api.services.keys.revoke(revoked.key.key_id)
    gone = assert_error(
        await api.client.get(LEADS, headers=bearer(revoked.secret)), 401, "UNAUTHORIZED"
    )

    assert "Authorization" in missing["error"]
    assert "revoked" in gone["error"].lower()


async def test_a_401_never_echoes_the_presented_key(api: Api) -> None:
    presented = api.key.secret[:-1] + ("B" if api.key.secret[-1] != "B" else "C")

    response = await api.client.get(LEADS, headers=bearer(presented))

    assert_error(response, 401, "UNAUTHORIZED")
    assert presented not in response.text


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
async def test_the_scheme_is_case_insensitive(api: Api, scheme: str) -> None:
    response = await api.client.get(LEADS, headers={"Authorization": f"{scheme} {api.key.secret}"})

    assert_ok(response)


async def test_revoking_one_key_leaves_the_accounts_other_keys_working(api: Api) -> None:
    other = await api.services.keys.create("acme", "second")
    await api.services.keys.revoke(other.key.key_id)

    assert_ok(await api.client.get(LEADS, headers=api.auth))
    assert_error(await api.client.get(LEADS, headers=bearer(other.secret)), 401, "UNAUTHORIZED")


async def test_a_key_revoked_after_use_stops_working(api: Api) -> None:
    assert_ok(await api.client.get(LEADS, headers=api.auth))

    await api.services.keys.revoke(api.key.key.key_id)

    assert_error(await api.client.get(LEADS, headers=api.auth), 401, "UNAUTHORIZED")


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Basic YWRtaW46YWRtaW4="}, {"Authorization": f"Bearer {UNKNOWN_KEY}"}],
    ids=["no-header", "basic", "unknown-key"],
)
async def test_the_openapi_document_needs_no_key(api: Api, headers: dict[str, Any]) -> None:
    response = await api.client.get("/schema/openapi.json", headers=headers)

    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")
