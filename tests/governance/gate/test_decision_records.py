"""Every decision record names what decided it: the policy version and its digest, the
frozen tool definition's digest, and (after an approval) the person who decided."""

import pytest

from governance.models import FrozenTool, Run
from ledger.models import Event
from tests.conftest import Api

pytestmark = pytest.mark.django_db


def last(run_id, type_):
    return Event.objects.filter(run_id=run_id, type=type_).order_by("-seq").first().data


def ask(runner, run_id, call_id, tool="read_file", arguments=None):
    return runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": "s",
            "tool_call_id": call_id,
            "tool": tool,
            "arguments": arguments or {"path": "/workspace/a"},
        },
    ).json()


def test_an_allowed_and_a_denied_decision_name_the_policy_and_tool_digests(make_run):
    run_id, runner = make_run()
    run = Run.objects.select_related("policy_version").get(pk=run_id)
    assert ask(runner, run_id, "c-1")["decision"] == "allow"
    data = last(run_id, "tool.decision")
    assert data["policy_version"] == run.policy_version.number
    assert data["policy_digest"] == run.policy_version.digest
    definition = FrozenTool.objects.get(run=run, name="read_file").definition_digest
    assert data["definition_digest"] == definition
    ask(runner, run_id, "c-2", tool="no_such_tool", arguments={})
    denied = last(run_id, "tool.decision")
    assert (denied["decision"], denied["source"]) == ("deny", "capability")
    assert denied["policy_digest"] == run.policy_version.digest
    assert denied["definition_digest"] is None  # the run never froze such a tool


def test_an_approved_call_names_its_approver_and_both_digests(make_run, approver):
    run_id, runner = make_run()
    run = Run.objects.select_related("policy_version").get(pk=run_id)
    definition = FrozenTool.objects.get(run=run, name="send_email").definition_digest
    answer = ask(runner, run_id, "c-1", tool="send_email", arguments={"to": "bob@example.com"})
    requested = last(run_id, "approval.requested")
    assert requested["policy_digest"] == run.policy_version.digest
    assert requested["definition_digest"] == definition
    decided = Api(user=approver).post(
        f"/v1/approvals/{answer['approval']['id']}/decision", {"decision": "approve"}
    )
    assert decided.status_code == 200, decided.content
    approval = last(run_id, "approval.decided")
    assert approval["decided_by"] == "alice"
    assert approval["policy_version"] == run.policy_version.number
    assert approval["policy_digest"] == run.policy_version.digest
    assert approval["definition_digest"] == definition
    decision = last(run_id, "tool.decision")
    assert (decision["decision"], decision["decided_by"]) == ("allow", "alice")
    assert decision["policy_digest"] == run.policy_version.digest
    assert decision["definition_digest"] == definition
