"""The approver's powers, attacked from below: a person who may decide a call is not thereby
someone who may write the organization's policy."""

import pytest
from django.test import Client

from governance.models import Approval, Policy, PolicyVersion, Run, RunGrant
from governance.services.orgs import api_key_create
from governance.services.policies import policy_save
from ledger.models import Event
from tests.conftest import TEST_POLICY, Api, run_body
from tests.governance.broker.support import brokered_run, call, connect, personal_call_pending

pytestmark = pytest.mark.django_db

CALL = {"id": "1", "value": "x"}


@pytest.fixture
def mos_pending(broker_org, operator, echo_server, member):
    """mo (role member) owns the personal connection `mine`; her run's call on it asks her."""
    return personal_call_pending(operator, echo_server, member)


def policy_state(org):
    policy = Policy.objects.get(org=org)
    return policy.current_version_id, PolicyVersion.objects.filter(policy=policy).count()


def test_a_member_owner_cannot_write_an_always_rule_into_the_orgs_policy(
    broker_org, mos_pending, member
):
    run_id, _, approval_id = mos_pending
    before = policy_state(broker_org)
    response = Api(user=member).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve", "remember": "policy"}
    )
    assert response.status_code == 403, response.content
    assert response.json()["error"] == "forbidden"
    assert policy_state(broker_org) == before
    assert Approval.objects.get(pk=approval_id).status == "pending"
    assert RunGrant.objects.count() == 0
    assert not Event.objects.filter(run_id=run_id, type="approval.decided").exists()


def test_the_portal_neither_offers_nor_accepts_the_policy_rule_from_a_member_owner(
    broker_org, mos_pending, member
):
    run_id, _, approval_id = mos_pending
    before = policy_state(broker_org)
    portal = Client()
    portal.force_login(member)
    page = portal.get(f"/admin/inbox/{approval_id}/").content.decode()
    assert 'value="remember_policy"' not in page
    assert 'value="remember"' in page  # this run only: still hers to give
    posted = portal.post(
        f"/admin/inbox/{approval_id}/decide/",
        {"decision": "remember_policy", "accept_wider_scope": "yes"},
    )
    assert posted.status_code == 403
    assert policy_state(broker_org) == before
    assert Approval.objects.get(pk=approval_id).status == "pending"
    assert not Event.objects.filter(run_id=run_id, type="approval.decided").exists()


def test_a_member_owner_still_approves_and_remembers_for_her_run(
    broker_org, mos_pending, member, echo_server
):
    run_id, runner, approval_id = mos_pending
    before = policy_state(broker_org)
    response = Api(user=member).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve", "remember": "run"}
    )
    assert response.status_code == 200, response.content
    assert response.json()["approval"]["remember_scope"] == "run"
    assert policy_state(broker_org) == before
    assert call(runner, run_id, "mine.update", CALL, call_id="c-2")["decision"] == "allow"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_approved_call_retried_from_many_threads_at_once_runs_upstream_once(
    broker_org, operator, echo_server, member, settings
):
    """Double-spending one approval: the agent fires the approved call's ids a dozen times at
    once, hoping two claims pass before either records. One runs; the rest are replays."""
    import threading

    from django.db import connections

    from ledger.chain_checks import chain_verify

    connect(operator, echo_server, slug="mine", kind="personal", owner="mo")
    run_id, runner = brokered_run(operator, slug="mine", invoked_by="mo")
    binding = Api(user=member).get("/v1/bindings?consent=pending").json()["bindings"][0]
    Api(user=member).post(f"/v1/bindings/{binding['id']}/consent", {"decision": "approve"})
    approval_id = call(runner, run_id, "mine.update", CALL)["approval"]["id"]
    decided = Api(user=member).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve"}
    )
    assert decided.status_code == 200, decided.content
    token = runner.client._credentials["HTTP_AUTHORIZATION"].split()[1]
    settings.FLUIDBOX_WAITS_PER_CREDENTIAL = 50  # every retry reaches the claim
    barrier = threading.Barrier(12)
    answers: list = []
    errors: list = []

    def retry() -> None:
        try:
            client = Api(token)
            barrier.wait()
            answers.append(
                client.post(
                    f"/v1/runs/{run_id}/tools/mine.update/call",
                    {"session_id": "s-1", "tool_call_id": "c-1", "arguments": CALL},
                )
            )
        except Exception as error:  # surfaced by the assertion on `errors`
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=retry) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [a.status_code for a in answers] == [200] * 12
    let_in = [a.json() for a in answers]
    assert [a["decision"] for a in let_in] == ["allow"] * 12
    assert sum(1 for a in let_in if a["result"] is not None) == 1
    assert [c["tool"] for c in echo_server.calls()] == ["update"]
    assert Event.objects.filter(run_id=run_id, type="tool.brokered").count() == 1
    assert chain_verify(run_id) == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_consent_queued_behind_its_runs_finish_is_refused_and_records_nothing_after_it(
    broker_org, operator, echo_server, member
):
    """The owner's consent to a binding is the owner's approval of a run: one that read the
    run as active, then waited for the run's counter while the run finished, must not land
    on the finished run, nor write `binding.decided` after `run.finished`."""
    from governance.models import FrozenBinding
    from ledger.chain_checks import chain_verify
    from tests.concurrency.test_settlement_lock_order import race_behind_the_counter, types_of

    connect(operator, echo_server, slug="mine", kind="personal", owner="mo")
    run_id, _ = brokered_run(operator, slug="mine", invoked_by="mo")
    binding = Api(user=member).get("/v1/bindings?consent=pending").json()["bindings"][0]
    finish, consent = race_behind_the_counter(
        run_id,
        lambda: operator.post(f"/v1/runs/{run_id}/finish"),
        lambda: Api(user=member).post(
            f"/v1/bindings/{binding['id']}/consent", {"decision": "approve"}
        ),
    )
    assert finish.status_code == 200, finish.content
    assert consent.status_code == 409, consent.content
    assert consent.json()["error"] == "run_finished"
    assert FrozenBinding.objects.get(pk=binding["id"]).consent == "pending"
    assert types_of(run_id)[-1] == "run.finished"
    assert "binding.decided" not in types_of(run_id)
    assert chain_verify(run_id) == []


ALLOW_FALLBACK = TEST_POLICY.replace("autonomous_fallback: deny", "autonomous_fallback: allow")


@pytest.fixture
def allow_fallback(org):
    policy_save(org=org, text=ALLOW_FALLBACK, author=None)
    return org


def test_a_member_cannot_start_an_autonomous_run_that_turns_every_ask_into_an_allow(
    allow_fallback, member
):
    """mo may not approve `send_email` (ASK), so she starts her own run autonomous: the
    policy's fallback would allow the call, and nobody who may decide it is asked."""
    key = Api(api_key_create(org=allow_fallback, user=member, name="mo").plaintext)
    runs_before = Run.objects.count()
    for client in (key, Api(user=member)):
        response = client.post("/v1/runs", run_body(autonomy="autonomous"))
        assert response.status_code == 403, response.content
        assert response.json()["error"] == "forbidden"
    assert Run.objects.count() == runs_before
    assert not Event.objects.filter(type="run.created").exists()
    # Supervised, her run's ASK still waits for an approver.
    created = key.post("/v1/runs", run_body())
    assert created.status_code == 201, created.content
    asked = Api(created.json()["session_token"]).post(
        f"/v1/runs/{created.json()['id']}/permission",
        {"session_id": "s", "tool_call_id": "c", "tool": "send_email", "arguments": {"to": "x"}},
    )
    assert asked.json()["decision"] == "pending"


def test_an_approver_and_an_operator_key_still_start_autonomous_runs(
    allow_fallback, approver, operator, member, org
):
    for client in (Api(user=approver), operator):
        response = client.post("/v1/runs", run_body(autonomy="autonomous"))
        assert response.status_code == 201, response.content
    # A fallback of deny asks nobody and allows nothing: a member may run that autonomous.
    policy_save(org=org, text=TEST_POLICY, author=None)
    assert Api(user=member).post("/v1/runs", run_body(autonomy="autonomous")).status_code == 201
