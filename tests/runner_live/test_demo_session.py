"""`make demo` against a live server: every decision of the scripted session, and its ledger."""

import io

import pytest
from django.urls import reverse

from governance.models import Approval, Run
from ledger.models import Event
from ledger.services import chain_verify
from runner import demo
from tests.mcp_servers.fixtures import free_port
from tests.runner_live.conftest import InboxApprover

EXPECTED_DECISIONS = [
    ("list_dir", "allow", "policy"),
    ("read_file", "allow", "policy"),
    ("run_command", "allow", "policy"),
    ("tracker.list_issues", "allow", "policy"),
    ("tracker.get_issue", "deny", "schema"),
    ("tracker.get_issue", "allow", "policy"),
    ("write_file", "allow", "policy"),
    ("run_command", "allow", "policy"),
    ("run_command", "deny", "policy"),
    ("run_command", "deny", "policy"),
    ("tracker.create_issue", "allow", "approval"),
]


def events_of(run_id, event_type):
    return list(Event.objects.filter(run_id=run_id, type=event_type).order_by("seq"))


@pytest.mark.slow
def test_the_demo_session_gets_the_decisions_its_script_expects(
    fluidbox_server, demo_org, operator_key, approver_key, tmp_path
):
    approver = InboxApprover(fluidbox_server.url, approver_key, "tracker.create_issue")
    approver.start()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    printed = io.StringIO()

    report = demo.run_demo(
        fluidbox_server.url,
        operator_key,
        approval_timeout=30,
        out=printed,
        workspace_root=workspace,
    )
    approver.join(timeout=30)

    assert approver.error is None
    decisions = [(o.step.tool, o.decision, o.source) for o in report.outcomes]
    assert decisions == EXPECTED_DECISIONS
    assert report.ok
    # The schema error told the agent what to fix, in words it can act on.
    assert "issue_id" in report.outcomes[4].result.text
    # The denied deletes deleted nothing; the allowed write landed inside the workspace.
    assert (workspace / "build" / "app.bundle.js").read_text() == "/* build output */\n"
    assert (workspace / "notes" / "triage.md").read_text().startswith("# Login timeout")
    # The brokered write ran once, after the human, and its result came back to the agent.
    created = report.outcomes[-1].result
    assert not created.is_error and "Raise the login timeout to 60 s" in created.text
    brokered = [e.data for e in events_of(report.run_id, "tool.brokered")]
    assert [(e["tool"], e["status"]) for e in brokered] == [
        ("tracker.list_issues", "succeeded"),
        ("tracker.get_issue", "succeeded"),
        ("tracker.create_issue", "succeeded"),
    ]

    # The links it printed are the portal's approval page and the run's timeline page.
    output = printed.getvalue()
    assert report.approval_ids == [approver.decided["id"]]
    approval_page = reverse("admin:inbox-approval", args=[int(approver.decided["id"])])
    timeline_page = reverse("admin:governance_run_change", args=[report.run_id])
    assert f"approve or deny it at {fluidbox_server.url}{approval_page}" in output
    assert f"timeline: {fluidbox_server.url}{timeline_page}" in output
    assert "ls -la; rm -rf /" in output and "run_command:rm * (NEVER)" in output

    assert Approval.objects.get(run_id=report.run_id).decided_by.username == "alice"
    assert len(events_of(report.run_id, "approval.requested")) == 1
    [decided] = events_of(report.run_id, "approval.decided")
    assert decided.data["outcome"] == "approved"
    assert Run.objects.get(pk=report.run_id).status == "finished"
    assert chain_verify(report.run_id) == []


@pytest.mark.slow
def test_the_demo_exits_non_zero_when_nobody_decides_in_time(
    fluidbox_server, demo_org, operator_key, capsys
):
    exit_code = demo.main(
        ["--url", fluidbox_server.url, "--operator-key", operator_key, "--approval-timeout", "1"]
    )

    output = capsys.readouterr().out
    assert exit_code == 1
    assert "nobody decided within the wait; the call did not run" in output
    assert "10 of 11 decisions as the script expects" in output
    run = Run.objects.get()
    brokered_tools = [e.data["tool"] for e in events_of(run.pk, "tool.brokered")]
    assert "tracker.create_issue" not in brokered_tools
    assert Approval.objects.get(run=run).status != "approved"


def test_the_demo_says_what_is_missing_when_no_server_answers(capsys):
    url = f"http://127.0.0.1:{free_port()}"

    exit_code = demo.main(["--url", url, "--operator-key", "fbx_unused"])

    assert exit_code == 2
    assert "is `make run` serving?" in capsys.readouterr().err
