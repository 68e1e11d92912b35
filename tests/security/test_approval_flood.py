"""An agent cannot bury one request among hundreds: a run may have at most
FLUIDBOX_PENDING_APPROVALS_PER_RUN approvals waiting for a human at once. Past it, a call
that would ask is denied (recorded, with the reason the agent reads), no approval is made
(so nobody is notified), and asking works again once the approver has caught up."""

from governance.models import Approval, ApprovalStatus, ToolCall
from ledger.models import Event
from tests.conftest import Api


def ask(runner, run_id, call_id):
    return runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": "s-1",
            "tool_call_id": call_id,
            "tool": "send_email",  # ASK in the test policy
            "arguments": {"to": f"{call_id}@example.com"},
        },
    )


def test_a_flood_of_asks_stops_at_the_cap_and_asking_resumes_once_decided(
    settings, make_run, approver
):
    settings.FLUIDBOX_PENDING_APPROVALS_PER_RUN = 3
    run_id, runner = make_run()
    for index in range(3):
        assert ask(runner, run_id, f"c-{index}").json()["decision"] == "pending"

    flooded = ask(runner, run_id, "c-3")
    assert flooded.status_code == 200
    answer = flooded.json()
    assert answer["decision"] == "deny" and answer["source"] == "approval"
    assert "already has 3 approvals waiting for a human" in answer["reason"]
    assert Approval.objects.filter(run_id=run_id).count() == 3  # nothing to notify anyone of
    recorded = ToolCall.objects.get(run_id=run_id, tool_call_id="c-3")
    assert recorded.decision == "deny"
    decision = Event.objects.get(run_id=run_id, type="tool.decision", data__tool_call_id="c-3")
    assert decision.data["decision"] == "deny"
    # The same ids again get the recorded answer: a retry is not a new request.
    assert ask(runner, run_id, "c-3").json()["decision"] == "deny"

    first = Approval.objects.filter(run_id=run_id, status=ApprovalStatus.PENDING).first()
    decided = Api(user=approver).post(f"/v1/approvals/{first.pk}/decision", {"decision": "approve"})
    assert decided.status_code == 200
    assert ask(runner, run_id, "c-4").json()["decision"] == "pending"


def test_the_cap_is_per_run(settings, make_run):
    settings.FLUIDBOX_PENDING_APPROVALS_PER_RUN = 1
    first_run, first_runner = make_run()
    second_run, second_runner = make_run()
    assert ask(first_runner, first_run, "a").json()["decision"] == "pending"
    assert ask(first_runner, first_run, "b").json()["decision"] == "deny"
    assert ask(second_runner, second_run, "a").json()["decision"] == "pending"
