"""Remembered grants and decisions under concurrency, staged in their worst order: another
connection holds the run's ledger counter (as a writer in the middle of its append does),
the requests queue behind it in a chosen order, then it lets go (see
`test_settlement_lock_order.race_behind_the_counter`). HTTP in, answers, rows and the
ledger out."""

import threading

import psycopg
import pytest
from django.db import connection

from governance.models import Approval, Policy, Role, RunGrant, ToolCall
from governance.services.orgs import user_create
from ledger.chain_checks import chain_verify
from tests.concurrency.test_settlement_lock_order import race_behind_the_counter, types_of
from tests.conftest import TEST_POLICY, Api
from tests.support.waiting import wait_until_waiting_on_locks

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

CALL = {"tool": "send_email", "arguments": {"to": "team@example.com"}}


def ask(runner: Api, run_id: str, call_id: str) -> dict:
    response = runner.post(
        f"/v1/runs/{run_id}/permission", {"session_id": "s-1", "tool_call_id": call_id, **CALL}
    )
    assert response.status_code == 200, response.content
    return response.json()


def decide(approver, approval_id: str, decision: str, remember=False):
    return Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": decision, "remember": remember}
    )


def test_an_identical_call_asked_while_the_grant_commits_is_allowed_by_it(make_run, approver):
    """Proves: a call that reaches the gate while Approve & Remember ("run") of the same exact
    call is being committed is recorded after the grant, yet opens a second approval for a
    call this run already granted (the grant was checked before the counter's lock, the
    approval recorded under it). The approver's decision is queued first; the identical
    call's ask second, so its record follows the grant's commit. It should be allowed by
    the grant, with no new approval for a human to decide again."""
    run_id, runner = make_run()
    first = ask(runner, run_id, "c-1")["approval"]["id"]

    decision, second = race_behind_the_counter(
        run_id,
        lambda: decide(approver, first, "approve", "run"),
        lambda: ask(Api(runner.token), run_id, "c-2"),
    )

    assert decision.status_code == 200, decision.content
    assert decision.json()["won"] is True
    assert RunGrant.objects.filter(run_id=run_id).count() == 1
    assert second["decision"] == "allow", second
    assert second["source"] == "approval"
    assert second["approval"] is None
    assert Approval.objects.filter(run_id=run_id).count() == 1
    types = types_of(run_id)
    assert types.count("approval.requested") == 1
    assert types.count("tool.decision") == 2
    assert chain_verify(run_id) == []
    # And a third identical call, asked once everything settled, is allowed the same way.
    assert ask(runner, run_id, "c-3")["decision"] == "allow"


@pytest.mark.parametrize("first_wins", ["deny", "approve"])
def test_approve_and_remember_racing_a_deny_makes_one_settlement(
    org, make_run, approver, first_wins
):
    """Proves (held): two approvers decide one approval at once, one Approve & Remember and one
    Deny. The first to get the counter wins; the other is told won=false and appends
    nothing; a grant exists only if the approval won, and the next identical call follows."""
    bob = user_create(username="bob", org=org, role=Role.APPROVER, password="pw-bob-123456")
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, "c-1")["approval"]["id"]
    approve = lambda: decide(approver, approval_id, "approve", "run")  # noqa: E731
    deny = lambda: decide(bob, approval_id, "deny")  # noqa: E731
    order = (deny, approve) if first_wins == "deny" else (approve, deny)
    first, second = race_behind_the_counter(run_id, *order)

    assert first.status_code == 200 and second.status_code == 200, (first.content, second.content)
    assert first.json()["won"] is True and second.json()["won"] is False
    status = "denied" if first_wins == "deny" else "approved"
    assert first.json()["approval"]["status"] == status == second.json()["approval"]["status"]
    assert RunGrant.objects.filter(run_id=run_id).count() == (0 if first_wins == "deny" else 1)
    types = types_of(run_id)
    assert types.count("approval.decided") == 1 and types.count("tool.decision") == 1
    assert chain_verify(run_id) == []
    following = ask(runner, run_id, "c-2")
    assert following["decision"] == ("pending" if first_wins == "deny" else "allow")


def test_approve_and_remember_queued_behind_the_runs_finish_grants_nothing(
    make_run, operator, approver
):
    """Proves (held): the run finishes while Approve & Remember waits for the counter. The
    finish denies the approval; the decision loses (won=false), leaves no grant, and the
    run's chain ends with run.finished."""
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, "c-1")["approval"]["id"]
    finish, decision = race_behind_the_counter(
        run_id,
        lambda: operator.post(f"/v1/runs/{run_id}/finish", {}),
        lambda: decide(approver, approval_id, "approve", "run"),
    )
    assert finish.status_code == 200, finish.content
    assert decision.status_code == 200, decision.content
    assert decision.json()["won"] is False
    assert decision.json()["approval"]["status"] == "denied"
    assert RunGrant.objects.filter(run_id=run_id).count() == 0
    assert ToolCall.objects.get(run_id=run_id).decision == "deny"
    types = types_of(run_id)
    assert types[-1] == "run.finished"
    assert types.count("approval.decided") == 1
    assert chain_verify(run_id) == []


def policy_row_held(policy_id: int):
    """Another connection holding the policy row, as a save in the middle of numbering its
    version holds it (released by rolling back)."""
    held = psycopg.connect(
        host=connection.settings_dict["HOST"] or "127.0.0.1",
        port=connection.settings_dict["PORT"] or 5432,
        dbname=connection.settings_dict["NAME"],
        user=connection.settings_dict["USER"] or "postgres",
        password=connection.settings_dict["PASSWORD"] or None,
    )
    held.execute(f"SELECT id FROM {Policy._meta.db_table} WHERE id = %s FOR UPDATE", [policy_id])
    return held


def test_a_policy_grant_and_an_editors_save_from_the_same_version_give_one_409(
    org, make_run, approver, admin_user
):
    """Proves (held): Approve & Remember ("policy") and an admin's save made from the same
    version queue for the policy row in that order. The grant's rule becomes the next
    version; the editor's save, based on the version before it, is a 409 policy_changed, so
    it cannot silently drop the rule (nor the rule drop the editor's change)."""
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, "c-1")["approval"]["id"]
    policy = Policy.objects.get(org=org, name="default")
    base = policy.current_version.number
    edited = TEST_POLICY.replace(
        "rules:\n", 'rules:\n  - pattern: "run_command:wget *"\n    action: NEVER\n', 1
    )
    answers: list = [None, None]

    def send(index, request):
        try:
            answers[index] = request()
        finally:
            connection.close()

    requests = (
        lambda: decide(approver, approval_id, "approve", "policy"),
        lambda: Api(user=admin_user).client.put(
            "/v1/policies/default", {"yaml": edited, "base_version": base}, format="json"
        ),
    )
    held = policy_row_held(policy.pk)
    threads = []
    try:
        for index, request in enumerate(requests):
            threads.append(threading.Thread(target=send, args=(index, request)))
            threads[-1].start()
            wait_until_waiting_on_locks(index + 1, f"request {index + 1} to queue for the policy")
    finally:
        held.rollback()
        held.close()
    for thread in threads:
        thread.join()
    decision, save = answers
    assert decision.status_code == 200, decision.content
    assert decision.json()["won"] is True
    assert save.status_code == 409, save.content
    assert save.json()["error"] == "policy_changed"
    current = Policy.objects.get(pk=policy.pk).current_version
    assert current.number == base + 1
    top = current.document["rules"][0]
    assert top["action"] == "ALWAYS" and top["pattern"].startswith("send_email:"), top
    assert "run_command:wget *" not in current.content
    types = types_of(run_id)
    assert types.count("approval.decided") == 1
    assert chain_verify(run_id) == []
