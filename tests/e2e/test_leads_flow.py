"""Leads over real HTTP, against ``leadmail serve`` on SQLite and on Postgres."""

from __future__ import annotations

from typing import Any

from tests.e2e.cli import cli_env, run_cli_parallel
from tests.e2e.keys import IssuedKey, issued_key
from tests.e2e.names import new_email, new_name
from tests.e2e.server import LeadmailServer
from tests.support.envelope import LEAD_FIELDS, LEADS, assert_error, ok_data


def lead_ids(page: Any) -> list[str]:
    return [item["lead_id"] for item in page["items"]]


def test_lead_lifecycle(server: LeadmailServer, primary_key: IssuedKey) -> None:
    email = new_email("ada")
    sent = {"name": "Ada Lovelace", "email": email, "source": "website", "note": "evenings"}
    with server.client(primary_key.secret) as api:
        added = ok_data(api.post(LEADS, json=sent))
        assert set(added) == LEAD_FIELDS
        assert {k: added[k] for k in sent} == sent
        assert added["lead_id"]
        assert added["created_at"]
        lead_id = added["lead_id"]

        assert ok_data(api.get(f"{LEADS}/{lead_id}")) == added
        assert lead_ids(ok_data(api.get(LEADS, params={"email": email}))) == [lead_id]
        assert lead_id in lead_ids(ok_data(api.get(LEADS, params={"limit": 100})))
        assert added["phone"] == ""

        # The phone, as typed: set, found by the exact-match filter, then cleared.
        phone = f"+44 20 7946 {int.from_bytes(lead_id.encode()) % 10_000:04d}"
        with_phone = ok_data(api.put(f"{LEADS}/{lead_id}", json={"phone": phone}))
        assert with_phone["phone"] == phone
        assert lead_ids(ok_data(api.get(LEADS, params={"phone": phone}))) == [lead_id]
        assert_error(
            api.put(f"{LEADS}/{lead_id}", json={"phone": "call me"}), 422, "VALIDATION_FAILED"
        )
        added = ok_data(api.put(f"{LEADS}/{lead_id}", json={"phone": ""}))

        # Partial update: only the note moves.
        updated = ok_data(api.put(f"{LEADS}/{lead_id}", json={"note": "enrolled"}))
        assert updated == {**added, "note": "enrolled", "updated_at": updated["updated_at"]}
        assert updated["updated_at"] >= added["created_at"]
        assert ok_data(api.get(f"{LEADS}/{lead_id}")) == updated

        # Same email again, exactly and in another case: the existing lead is named.
        for again in (email, email.upper()):
            duplicate = api.post(LEADS, json={"name": "Someone Else", "email": again})
            body = assert_error(duplicate, 409, "LEAD_EXISTS")
            assert body["data"]["lead_id"] == lead_id
        assert ok_data(api.get(f"{LEADS}/{lead_id}")) == updated

        deleted = ok_data(api.delete(f"{LEADS}/{lead_id}"))
        assert deleted == {"lead_id": lead_id}
        assert_error(api.get(f"{LEADS}/{lead_id}"), 404, "LEAD_NOT_FOUND")
        assert_error(api.put(f"{LEADS}/{lead_id}", json={"note": "x"}), 404, "LEAD_NOT_FOUND")
        assert_error(api.delete(f"{LEADS}/{lead_id}"), 404, "LEAD_NOT_FOUND")
        assert lead_ids(ok_data(api.get(LEADS, params={"email": email}))) == []
        # Once deleted, the email is free again.
        assert ok_data(api.post(LEADS, json=sent))["lead_id"] != lead_id


def test_accounts_do_not_see_each_other(server: LeadmailServer) -> None:
    alice, bob = server.keys_for(new_name("alice-school"), new_name("bob-school"))
    email = new_email("shared")
    with server.client(alice.secret) as a, server.client(bob.secret) as b:
        original = ok_data(a.post(LEADS, json={"name": "Alan Turing", "email": email}))
        lead_id = original["lead_id"]

        assert_error(b.get(f"{LEADS}/{lead_id}"), 404, "LEAD_NOT_FOUND")
        assert_error(b.put(f"{LEADS}/{lead_id}", json={"note": "mine"}), 404, "LEAD_NOT_FOUND")
        assert_error(b.delete(f"{LEADS}/{lead_id}"), 404, "LEAD_NOT_FOUND")
        assert lead_id not in lead_ids(ok_data(b.get(LEADS, params={"limit": 100})))
        assert lead_ids(ok_data(b.get(LEADS, params={"email": email}))) == []

        # Uniqueness is per account: Bob may hold a lead with the same address.
        bobs = ok_data(b.post(LEADS, json={"name": "Alan T.", "email": email}))
        assert bobs["lead_id"] != lead_id
        assert lead_ids(ok_data(b.get(LEADS, params={"limit": 100}))) == [bobs["lead_id"]]

        assert ok_data(a.get(f"{LEADS}/{lead_id}")) == original
        assert lead_ids(ok_data(a.get(LEADS, params={"limit": 100}))) == [lead_id]


def test_revoked_key_is_refused_on_the_next_request(server: LeadmailServer) -> None:
    account = new_name("rotating")
    [old] = server.create_keys(account)
    with server.client(old.secret) as api_old:
        ok_data(api_old.get(LEADS))

        # While the server runs: revoke the old key, and (to save a second) mint the
        # account's next key at the same moment.
        revoked, created = run_cli_parallel(
            [["keys", "revoke", old.key_id], ["keys", "create", "--account", account]],
            cli_env(server.database_url),
            server.workdir,
        )
        assert revoked.returncode == 0, revoked.describe()
        assert old.key_id in revoked.stdout, revoked.describe()
        new = issued_key(created, account)
        server.secrets.append(new.secret)

        email = new_email("after-revoke")
        for refused in (
            api_old.get(LEADS),
            api_old.post(LEADS, json={"name": "Grace Hopper", "email": email}),
        ):
            assert_error(refused, 401, "UNAUTHORIZED")
            assert refused.headers["www-authenticate"].startswith("Bearer")
    # The refused POST wrote nothing, and the account's other key still works.
    with server.client(new.secret) as api_new:
        assert lead_ids(ok_data(api_new.get(LEADS, params={"email": email}))) == []


def test_every_active_key_of_an_account_sees_the_same_leads(server: LeadmailServer) -> None:
    keys = server.create_keys(new_name("many-keys"), count=3)
    assert len({k.key_id for k in keys}) == 3
    added: list[str] = []
    for number, key in enumerate(keys):
        with server.client(key.secret) as api:
            lead = {"name": f"Lead {number}", "email": new_email(f"via-key-{number}")}
            added.append(ok_data(api.post(LEADS, json=lead))["lead_id"])
    for key in keys:
        with server.client(key.secret) as api:
            assert sorted(lead_ids(ok_data(api.get(LEADS)))) == sorted(added)
    # One key changes a lead another key created.
    with server.client(keys[2].secret) as api:
        assert ok_data(api.put(f"{LEADS}/{added[0]}", json={"source": "fair"}))["source"] == (
            "fair"
        )
    with server.client(keys[0].secret) as api:
        assert ok_data(api.get(f"{LEADS}/{added[0]}"))["source"] == "fair"


def test_missing_or_unknown_key_is_401_with_a_bearer_challenge(
    server: LeadmailServer,
) -> None:
    with server.client() as anonymous:
        response = anonymous.get(LEADS)
        assert_error(response, 401, "UNAUTHORIZED")
        assert response.headers["www-authenticate"].startswith("Bearer")
    unknown = "lm_" + "A" * 43
    with server.client(unknown) as stranger:
        response = stranger.get(LEADS)
        assert_error(response, 401, "UNAUTHORIZED")
        assert response.headers["www-authenticate"].startswith("Bearer")


def test_unknown_route_is_a_404_envelope(server: LeadmailServer, primary_key: IssuedKey) -> None:
    with server.client(primary_key.secret) as api:
        assert_error(api.get("/api/v1/nothing-here"), 404, "NOT_FOUND")
        assert_error(api.post("/api/v2/leads", json={}), 404, "NOT_FOUND")


def test_wrong_method_is_a_405_envelope(server: LeadmailServer, primary_key: IssuedKey) -> None:
    with server.client(primary_key.secret) as api:
        response = api.patch(LEADS, json={"note": "x"})
        assert_error(response, 405, "METHOD_NOT_ALLOWED")
        assert "POST" in response.headers.get("allow", ""), response.headers
        assert_error(api.delete(LEADS), 405, "METHOD_NOT_ALLOWED")


def test_malformed_json_is_a_400_envelope(server: LeadmailServer, primary_key: IssuedKey) -> None:
    headers = {"Content-Type": "application/json"}
    with server.client(primary_key.secret) as api:
        email = new_email("truncated")
        truncated = f'{{"name": "Ada", "email": "{email}"'
        assert_error(api.post(LEADS, content=truncated, headers=headers), 400, "MALFORMED_JSON")
        assert_error(api.post(LEADS, content="not json", headers=headers), 400, "MALFORMED_JSON")
        added = ok_data(api.post(LEADS, json={"name": "Ada", "email": new_email("fine")}))
        assert_error(
            api.put(f"{LEADS}/{added['lead_id']}", content="{", headers=headers),
            400,
            "MALFORMED_JSON",
        )
        # Nothing was stored from the broken body.
        assert lead_ids(ok_data(api.get(LEADS, params={"email": email}))) == []
