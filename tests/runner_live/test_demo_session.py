"""`make demo` against a live server: every decision of the scripted session, and its ledger."""

import io
import subprocess

import pytest
from django.urls import reverse

from governance.models import Approval, Run
from ledger.chain_checks import chain_verify
from ledger.models import Event
from runner import demo
from tests.mcp_servers.fixtures import free_port
from tests.runner_live.conftest import InboxApprover
from tests.support.servers import BIN, ROOT, child_environment

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


def verified_in_process(run_id: str) -> demo.ChainCheck:
    return demo.ChainCheck(chain_verify(run_id) == [], "checked by the test")


def make_demo(server, *options: str, **env: str) -> subprocess.CompletedProcess:
    """What `make demo` runs (see the Makefile), as a separate process on the test database."""
    return subprocess.run(
        [str(BIN / "python"), "-m", "runner.demo", "--url", server.url, *options],
        cwd=ROOT,
        env=child_environment(**env),
        capture_output=True,
        text=True,
        timeout=600,
    )


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
        approver=None,  # --wait-for-human: the InboxApprover thread is the person
        out=printed,
        workspace_root=workspace,
        verify_chain=verified_in_process,
    )
    approver.join()

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
def test_make_demo_runs_unattended_and_ends_with_the_verified_chain(
    fluidbox_server, demo_org, operator_key, approver_key
):
    result = make_demo(
        fluidbox_server,
        "--operator-key",
        operator_key,
        "--approver-pause",
        "1.5",
        FLUIDBOX_APPROVER_KEY=approver_key,
    )

    output = result.stdout
    assert result.returncode == 0, output + result.stderr
    run = Run.objects.get()
    approval = Approval.objects.get(run=run)
    link = f"approve or deny it at {fluidbox_server.url}/admin/inbox/{approval.pk}/"
    pause = "the demo approver approves it in 1.5 s (`make demo WAIT_FOR_HUMAN=1`"
    # The link first, then the visible pause, then the decision through the API.
    assert output.index(link) < output.index(pause) < output.index("approved by alice")
    assert "11 of 11 decisions as the script expects" in output
    assert (approval.status, approval.decided_by.username) == ("approved", "alice")
    requested, decided = (
        events_of(run.pk, "approval.requested")[0],
        events_of(run.pk, "approval.decided")[0],
    )
    assert (decided.at - requested.at).total_seconds() >= 1.5
    assert decided.data["decided_by"] == "alice"
    # The last word is the ledger's own verifier, on every event of the run.
    events = Event.objects.filter(run_id=run.pk).count()
    last = output.strip().splitlines()[-1]
    assert last == f"chain:    verified: ok: 1 run(s), {events} event(s) verified"
    assert chain_verify(run.pk) == []


def test_the_demo_never_calls_a_chain_broken_that_its_database_does_not_hold(tmp_path, monkeypatch):
    # `make demo` from a terminal without the server's DATABASE_URL read another database,
    # found no such run and printed `chain: BROKEN`: a tamper verdict on nothing.
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'other.sqlite3'}")
    monkeypatch.setenv("FLUIDBOX_DATA_DIR", str(tmp_path))
    subprocess.run([str(BIN / "python"), "manage.py", "migrate", "-v", "0"], cwd=ROOT, check=True)
    run_id = "0b5c6e1e-3a43-4e55-9a57-2b5a1a1e8f00"

    check = demo.verify_chain_with_manage_py(run_id)

    assert check.verified is None
    assert f"no run {run_id} in the ledger" in check.text
    assert "with the server's DATABASE_URL" in check.text


def test_make_demo_passes_wait_for_human_through():
    for value, flag in (("1", True), ("", False)):
        dry_run = subprocess.run(
            ["make", "-n", "--no-print-directory", "demo", f"WAIT_FOR_HUMAN={value}", "PORT=8123"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        command = dry_run.stdout.strip().splitlines()[-1]
        assert command.startswith(".venv/bin/python -m runner.demo --url http://127.0.0.1:8123")
        assert command.endswith("--wait-for-human") is flag


@pytest.mark.slow
def test_waiting_for_a_human_who_never_comes_exits_non_zero(
    fluidbox_server, demo_org, operator_key
):
    result = make_demo(
        fluidbox_server,
        "--operator-key",
        operator_key,
        "--wait-for-human",
        "--approval-timeout",
        "1",
    )

    assert result.returncode == 1
    assert "waiting up to 1 s for a human" in result.stdout
    assert "nobody decided within the wait; the call did not run" in result.stdout
    assert "10 of 11 decisions as the script expects" in result.stdout
    run = Run.objects.get()
    brokered_tools = [e.data["tool"] for e in events_of(run.pk, "tool.brokered")]
    assert "tracker.create_issue" not in brokered_tools
    assert Approval.objects.get(run=run).status != "approved"


def test_the_demo_says_what_is_missing_when_no_server_answers(capsys):
    url = f"http://127.0.0.1:{free_port()}"

    exit_code = demo.main(["--url", url, "--operator-key", "fbx_unused", "--approver-key", "x"])

    assert exit_code == 2
    assert "is `make run` serving?" in capsys.readouterr().err


def test_the_demo_says_how_to_get_an_approver_key(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLUIDBOX_DATA_DIR", str(tmp_path))  # no key file there
    monkeypatch.delenv("FLUIDBOX_APPROVER_KEY", raising=False)

    exit_code = demo.main(["--url", "http://127.0.0.1:9", "--operator-key", "fbx_unused"])

    assert exit_code == 2
    error = capsys.readouterr().err
    assert "no key for the demo approver" in error and "--wait-for-human" in error
