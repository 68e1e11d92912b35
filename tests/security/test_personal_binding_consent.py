"""An operator's word that a run is "invoked by bob" is not bob.

The attack: with an operator key, write a policy that ALWAYS allows `bobtracker.*`, create a
run with `"invoked_by": "bob"` and bob's personal connection, call
`bobtracker.create_issue`. Bob was never asked. A run may use a personal connection only
when the owner's own credential created it, or once the owner approved that binding.
"""

import pytest
from django.test import Client

from governance.models import FrozenBinding, Role
from governance.services.orgs import api_key_create, user_create
from ledger.chain_checks import chain_verify
from ledger.models import Event
from tests.conftest import Api, run_body, run_from_before_names_were_checked
from tests.security.conftest import connect_bobs_tracker

pytestmark = pytest.mark.django_db


@pytest.fixture
def bobs_connection(org, operator, bob, tracker):
    return connect_bobs_tracker(operator, tracker, credential="Bearer b0b")


def create_issue(runner, run_id, call_id="c-1"):
    response = runner.post(
        f"/v1/runs/{run_id}/tools/bobtracker.create_issue/call",
        {"session_id": "s-1", "tool_call_id": call_id, "arguments": {"title": "pwned"}},
    )
    assert response.status_code == 200, response.content
    return response.json()


def operator_run(operator, **overrides):
    body = run_body(bundles=[], connections=["bobtracker"], invoked_by="bob", **overrides)
    response = operator.post("/v1/runs", body)
    assert response.status_code == 201, response.content
    return response.json(), Api(response.json()["session_token"])


def test_an_operator_naming_bob_cannot_use_bobs_connection(operator, bobs_connection, tracker):
    created, runner = operator_run(operator)
    assert created["bindings"] == [
        {
            "id": created["bindings"][0]["id"],
            "connection": "bobtracker",
            "kind": "personal",
            "consent": "pending",
        }
    ]
    answer = create_issue(runner, created["id"])
    assert (answer["decision"], answer["source"]) == ("deny", "binding")
    assert "has not yet approved" in answer["reason"]
    assert answer["result"] is None
    assert tracker.calls() == []
    decision = Event.objects.get(run_id=created["id"], type="tool.decision")
    assert (decision.data["decision"], decision.data["source"]) == ("deny", "binding")
    run_created = Event.objects.get(run_id=created["id"], type="run.created").data
    assert run_created["connections"][0]["consent"] == "pending"
    assert run_created["created_by"] == "operator key ci"


def test_nobody_but_bob_can_consent_for_him(
    org, operator, bobs_connection, tracker, admin_user, approver
):
    created, runner = operator_run(operator)
    binding_id = created["bindings"][0]["id"]
    root = user_create(
        username="root", org=org, role=Role.ADMIN, password="pw-r", is_superuser=True
    )
    url = f"/v1/bindings/{binding_id}/consent"
    assert operator.post(url, {"decision": "approve"}).status_code == 403
    for person in (admin_user, approver, root):
        assert Api(user=person).post(url, {"decision": "approve"}).status_code == 404
        assert Api(user=person).get("/v1/bindings").json()["bindings"] == []
    assert FrozenBinding.objects.get(pk=binding_id).consent == "pending"
    assert create_issue(runner, created["id"])["source"] == "binding"
    assert tracker.calls() == []
    assert not Event.objects.filter(run_id=created["id"], type="binding.decided").exists()


def test_once_bob_approves_the_binding_the_policy_decides_each_call(
    operator, bobs_connection, tracker, bob_key
):
    created, runner = operator_run(operator)
    assert create_issue(runner, created["id"], "c-before")["source"] == "binding"

    waiting = bob_key.get("/v1/bindings?consent=pending").json()["bindings"]
    assert [(b["connection"], b["run"]["id"], b["run"]["created_by"]) for b in waiting] == [
        ("bobtracker", created["id"], "operator key ci")
    ]
    consent = bob_key.post(f"/v1/bindings/{waiting[0]['id']}/consent", {"decision": "approve"})
    assert consent.status_code == 200, consent.content
    assert (consent.json()["consent"], consent.json()["decided_by"]) == ("approved", "bob")

    answer = create_issue(runner, created["id"], "c-after")
    assert answer["decision"] == "allow"
    assert answer["result"]["isError"] is False
    assert [c["arguments"] for c in tracker.calls()] == [{"title": "pwned"}]
    decided = Event.objects.get(run_id=created["id"], type="binding.decided").data
    assert (decided["consent"], decided["decided_by"]) == ("approved", "bob")
    assert chain_verify(created["id"]) == []
    # Answered once: a second answer changes nothing.
    again = bob_key.post(f"/v1/bindings/{waiting[0]['id']}/consent", {"decision": "deny"})
    assert again.status_code == 409
    assert again.json()["consent"] == "approved"


def test_when_bob_refuses_the_run_never_uses_his_connection(
    operator, bobs_connection, tracker, bob_key
):
    created, runner = operator_run(operator)
    binding_id = created["bindings"][0]["id"]
    refused = bob_key.post(f"/v1/bindings/{binding_id}/consent", {"decision": "deny"})
    assert refused.status_code == 200
    answer = create_issue(runner, created["id"])
    assert (answer["decision"], answer["source"]) == ("deny", "binding")
    assert "refused" in answer["reason"]
    assert (
        bob_key.post(f"/v1/bindings/{binding_id}/consent", {"decision": "approve"}).status_code
        == 409
    )
    assert create_issue(runner, created["id"], "c-2")["source"] == "binding"
    assert tracker.calls() == []


def test_bobs_own_run_still_asks_him_while_his_connection_holds_someone_elses_credential(
    operator, bobs_connection, tracker, bob, bob_key
):
    """The operator created bob's personal connection with a credential of the operator's
    choosing. A run bob makes himself would call out under it, reading in the ledger as bob's
    own account: it waits for bob's consent, which says whose the credential is."""
    connection = operator.get(f"/v1/connections/{bobs_connection}").json()
    assert connection["credential"] == {
        "placement": "header",
        "name": "Authorization",
        "from_owner": False,
    }
    response = bob_key.post("/v1/runs", run_body(bundles=[], connections=["bobtracker"]))
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["bindings"][0]["consent"] == "pending"
    assert create_issue(Api(created["session_token"]), created["id"])["source"] == "binding"
    assert tracker.calls() == []
    waiting = bob_key.get("/v1/bindings?consent=pending").json()["bindings"]
    assert [(b["connection"], b["credential_from_owner"]) for b in waiting] == [
        ("bobtracker", False)
    ]
    portal = Client()
    portal.force_login(bob)
    page = portal.get("/admin/inbox/bindings/").content.decode()
    assert "its credential was given by someone else, not by you" in page
    facts = portal.get(f"/admin/governance/connection/{bobs_connection}/change/").content.decode()
    assert "given by someone other than its owner" in facts


def test_bobs_own_key_creates_a_run_that_uses_his_connection_without_asking(
    bobs_connection, tracker, bob_key
):
    reconnected = bob_key.post(
        f"/v1/connections/{bobs_connection}/reconnect",
        {"credential": {"header": "Authorization", "value": "Bearer b0bs-own"}},
    )
    assert reconnected.status_code == 200, reconnected.content
    assert reconnected.json()["credential"]["from_owner"] is True
    response = bob_key.post("/v1/runs", run_body(bundles=[], connections=["bobtracker"]))
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["invoked_by"] == "bob"
    assert created["bindings"][0]["consent"] == "owner"
    answer = create_issue(Api(created["session_token"]), created["id"])
    assert answer["decision"] == "allow"
    [received] = tracker.calls()
    assert received["headers"]["authorization"] == "Bearer b0bs-own"


def test_a_person_cannot_create_a_run_in_someone_elses_name(
    org, bobs_connection, member, auditor, tracker
):
    mo = Api(api_key_create(org=org, user=member, name="mo").plaintext)
    as_bob = mo.post("/v1/runs", run_body(bundles=[], connections=["bobtracker"], invoked_by="bob"))
    assert as_bob.status_code == 403
    as_self = mo.post("/v1/runs", run_body(bundles=[], connections=["bobtracker"]))
    assert as_self.status_code == 400
    assert "belongs to someone else" in as_self.json()["detail"]
    audrey = Api(api_key_create(org=org, user=auditor, name="audrey").plaintext)
    assert audrey.post("/v1/runs", run_body()).status_code == 403
    assert not FrozenBinding.objects.exists()
    assert tracker.calls() == []


def test_bob_answers_in_the_portal_and_a_superuser_cannot(
    org, operator, bobs_connection, bob, tracker
):
    created, runner = operator_run(operator)
    binding_id = created["bindings"][0]["id"]
    root = user_create(
        username="root", org=org, role=Role.ADMIN, password="pw-r", is_superuser=True
    )
    superuser = Client()
    superuser.force_login(root)
    page = superuser.get("/admin/inbox/bindings/").content.decode()
    assert "No run is waiting for you." in page
    forged = superuser.post(f"/admin/inbox/bindings/{binding_id}/decide/", {"decision": "approve"})
    assert forged.status_code == 302
    assert FrozenBinding.objects.get(pk=binding_id).consent == "pending"

    owner = Client()
    owner.force_login(bob)
    inbox = owner.get("/admin/inbox/").content.decode()
    assert "1 run asks to use your personal connections" in inbox
    listing = owner.get("/admin/inbox/bindings/").content.decode()
    assert f'data-binding-id="{binding_id}"' in listing and "operator key ci" in listing
    owner.post(f"/admin/inbox/bindings/{binding_id}/decide/", {"decision": "approve"})
    assert FrozenBinding.objects.get(pk=binding_id).consent == "approved"
    assert create_issue(runner, created["id"])["decision"] == "allow"
    assert len(tracker.calls()) == 1


def test_the_binding_page_shows_an_agent_name_with_a_hidden_character_marked(
    org, operator, bobs_connection, bob
):
    """An operator names its agent `triage-bot` plus a zero-width space: to bob, asked to
    lend his connection, it must not pass for the `triage-bot` he trusts."""
    refused = operator.post(
        "/v1/runs",
        run_body(
            bundles=[], connections=["bobtracker"], invoked_by="bob", agent="triage-bot\u200b"
        ),
    )
    assert refused.status_code == 400, refused.content  # refused at the door since review 56
    created = run_from_before_names_were_checked(
        org, agent="triage-bot\u200b", bundles=[], connections=["bobtracker"], invoked_by="bob"
    )
    binding_id = created.run.bindings.get().pk
    owner = Client()
    owner.force_login(bob)
    pages = {"pending": owner.get("/admin/inbox/bindings/").content.decode()}
    owner.post(f"/admin/inbox/bindings/{binding_id}/decide/", {"decision": "deny"})
    pages["decided"] = owner.get("/admin/inbox/bindings/").content.decode()
    for name, page in pages.items():
        assert f'data-binding-id="{binding_id}"' in page or name == "decided", name
        assert "triage-bot\u200b" not in page, name
        assert "triage-bot<mark" in page, name
