"""An approval nobody decides and nobody waits on is settled at expiry by the worker."""

import pytest

from governance.models import Approval
from governance.services.policies import policy_save
from ledger.chain_checks import chain_verify
from ledger.models import Event
from tests.governance.gate.test_pipeline import ask
from tests.support.servers import Worker
from tests.support.waiting import wait_until

# README, Approvals: "settled as timed_out within 3 s of expiry while a worker is free".
EXPIRY_BOUND_SECONDS = 3.0

POLICY = 'name: default\napproval_timeout: 2\nrules:\n  - {pattern: "send_email:*", action: ASK}\n'


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_an_unattended_approval_is_settled_by_the_worker_within_seconds_of_expiry(
    org, make_run, tmp_path
):
    policy_save(org=org, text=POLICY, author=None)
    with Worker(tmp_path) as worker:
        worker.wait_until_ready()
        run_id, runner = make_run()
        answer = ask(runner, run_id, "send_email", {"to": "bob@example.com"})  # no wait
        assert answer["decision"] == "pending"
        approval_id = int(answer["approval"]["id"])
        wait_until(
            lambda: Approval.objects.filter(pk=approval_id).exclude(status="pending").exists(),
            "the worker to settle the expired approval",
        )

    approval = Approval.objects.get(pk=approval_id)
    assert approval.status == "timed_out"
    late = (approval.decided_at - approval.expires_at).total_seconds()
    assert 0 <= late <= EXPIRY_BOUND_SECONDS, f"settled {late:.2f} s after expiry"
    events = {e.type: e.data for e in Event.objects.filter(run_id=run_id)}
    assert events["approval.decided"]["outcome"] == "timed_out"
    assert events["approval.decided"]["approval_id"] == approval_id
    decision = events["tool.decision"]
    assert (decision["decision"], decision["source"]) == ("deny", "approval")
    assert decision["reason"] == "approval timed out"
    assert chain_verify(run_id) == []
    # The runner learns it on its next call, and nothing new is decided.
    again = ask(runner, run_id, "send_email", {"to": "bob@example.com"})
    assert (again["decision"], again["reason"]) == ("deny", "approval timed out")
    assert Event.objects.filter(run_id=run_id, type="tool.decision").count() == 1
