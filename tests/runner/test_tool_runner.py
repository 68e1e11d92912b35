"""The tool runner: the gate is asked before anything runs, and its refusals reach the model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runner import (
    DEFAULT_PROGRAMS,
    SANDBOX_BASIC,
    Executor,
    GateAuthError,
    ToolRunner,
    ToolSpec,
    Workspace,
)
from runner.tools import RUN_COMMAND, MatchArgument

CANARY = "canary-5b1e77d0-deploy-key"
DEPLOY = ToolSpec(
    name="deploy",
    description="Run a deployment command with the deployment credentials.",
    access="write",
    match_argument=MatchArgument("command", "shell"),
    schema=RUN_COMMAND.schema,
    handler="run_command",
    secrets=True,
)


@pytest.fixture
def tool_runner(fake_gate, workspace: Workspace) -> ToolRunner:
    executor = Executor(workspace, DEFAULT_PROGRAMS | {"printenv"}, timeout=60.0)
    return ToolRunner(
        fake_gate.client(), workspace, executor, tools=(*SANDBOX_BASIC, DEPLOY), total_wait=0.5
    )


def test_an_allowed_write_then_read_round_trips(tool_runner: ToolRunner, workspace) -> None:
    written = tool_runner.run_tool("s-1", "c-1", "write_file", {"path": "a/b.txt", "content": "hi"})
    read = tool_runner.run_tool("s-1", "c-2", "read_file", {"path": "a/b.txt"})
    listed = tool_runner.run_tool("s-1", "c-3", "list_dir", {"path": "."})
    assert not written.is_error and written.text == "Wrote 2 bytes to /workspace/a/b.txt."
    assert not read.is_error and read.text == "hi"
    assert listed.text == "a/"
    assert (workspace.root / "a" / "b.txt").read_text() == "hi"


def test_a_denied_command_does_not_run_and_the_model_reads_why(
    tool_runner: ToolRunner, fake_gate, workspace
) -> None:
    fake_gate.verdicts["run_command"] = "deny"
    result = tool_runner.run_tool("s-1", "c-1", "run_command", {"command": "touch marker"})
    assert result.is_error
    assert result.text == "Denied by policy rule run_command:*; not run."
    assert not (workspace.root / "marker").exists()
    fake_gate.verdicts["run_command"] = "allow"
    assert not tool_runner.run_tool(
        "s-1", "c-2", "run_command", {"command": "touch marker"}
    ).is_error
    assert (workspace.root / "marker").exists()


def test_a_denied_write_leaves_no_file(tool_runner: ToolRunner, fake_gate, workspace) -> None:
    fake_gate.verdicts["write_file"] = "deny"
    result = tool_runner.run_tool("s-1", "c-1", "write_file", {"path": "x.txt", "content": "no"})
    assert result.is_error
    assert not (workspace.root / "x.txt").exists()


def test_a_call_still_awaiting_approval_does_not_run(
    tool_runner: ToolRunner, fake_gate, workspace
) -> None:
    fake_gate.verdicts["write_file"] = "ask"
    result = tool_runner.run_tool("s-1", "c-1", "write_file", {"path": "x.txt", "content": "no"})
    assert result.is_error and "waiting for a human approval" in result.text
    assert not (workspace.root / "x.txt").exists()


def test_the_gate_judges_the_real_path_a_link_leads_to(
    tool_runner: ToolRunner, fake_gate, workspace
) -> None:
    (workspace.root / "deploy" / "prod").mkdir(parents=True)
    os.symlink("deploy/prod", workspace.root / "innocent")
    tool_runner.run_tool("s-1", "c-1", "write_file", {"path": "innocent/app.yaml", "content": "x"})
    tool_runner.run_tool("s-1", "c-2", "read_file", {"path": "../etc/passwd"})
    sent = [
        request["body"]["arguments"]["path"] for request in fake_gate.requests_to("/permission")
    ]
    assert sent == ["/workspace/deploy/prod/app.yaml", "/workspace/../etc/passwd"]


def test_confinement_holds_even_when_the_gate_allows_an_escape(
    tool_runner: ToolRunner, workspace, outside: Path, outside_untouched
) -> None:
    os.symlink(outside, workspace.root / "link_out")
    attempts = [
        ("read_file", {"path": str(outside / "sentinel.txt")}),
        ("read_file", {"path": "link_out/sentinel.txt"}),
        ("write_file", {"path": "../outside/sentinel.txt", "content": "pwned"}),
        ("write_file", {"path": "link_out/new.txt", "content": "pwned"}),
        ("list_dir", {"path": "link_out"}),
        ("run_command", {"command": "cat ../outside/sentinel.txt"}),
        ("run_command", {"command": "rm -rf link_out/"}),
    ]
    for number, (tool, arguments) in enumerate(attempts):
        result = tool_runner.run_tool("s-1", f"c-{number}", tool, arguments)
        assert result.is_error and result.text.startswith("Refused:")
        assert "outside-the-workspace" not in result.text
    assert outside_untouched()


def test_a_secrets_tool_gets_its_secret_but_the_model_never_sees_it(
    tool_runner: ToolRunner, fake_gate, workspace
) -> None:
    fake_gate.secrets["deploy"] = {"DEPLOY_TOKEN": CANARY}
    printed = tool_runner.run_tool("s-1", "c-1", "deploy", {"command": "printenv DEPLOY_TOKEN"})
    assert not printed.is_error
    assert CANARY not in printed.text and "***" in printed.text
    # A tool without `secrets: true` never gets it, and a later read of a leaked copy is masked.
    plain = tool_runner.run_tool("s-1", "c-2", "run_command", {"command": "printenv"})
    assert "DEPLOY_TOKEN" not in plain.text
    (workspace.root / "leaked.txt").write_text(f"key: {CANARY}")
    read = tool_runner.run_tool("s-1", "c-3", "read_file", {"path": "leaked.txt"})
    assert read.text == "key: ***"
    assert [r["path"] for r in fake_gate.requests if r["method"] == "GET"] == [
        "/v1/runs/run-1/secrets"
    ]


def test_a_read_only_run_gets_no_secret_and_its_secrets_tool_does_not_run(
    tool_runner: ToolRunner, fake_gate, workspace
) -> None:
    fake_gate.secrets["deploy"] = {"DEPLOY_TOKEN": CANARY}
    fake_gate.read_only = True
    result = tool_runner.run_tool("s-1", "c-1", "deploy", {"command": "touch deployed"})
    assert result.is_error and "read-only run gets no secrets" in result.text
    assert not (workspace.root / "deployed").exists()


def test_an_exfiltration_program_needs_an_explicit_always_rule(
    fake_gate, workspace: Workspace
) -> None:
    executor = Executor(workspace, exfiltration_programs=frozenset({"curl"}), timeout=60.0)
    runner = ToolRunner(fake_gate.client(), workspace, executor)
    fake_gate.rule_actions["run_command"] = "ASK"  # e.g. allowed by the autonomous fallback
    refused = runner.run_tool("s-1", "c-1", "run_command", {"command": "curl --version"})
    assert refused.is_error and "explicit ALWAYS rule" in refused.text
    fake_gate.rule_actions["run_command"] = "ALWAYS"
    allowed = runner.run_tool("s-1", "c-2", "run_command", {"command": "curl --version"})
    assert not allowed.is_error and "curl" in allowed.text


def test_a_failing_command_is_a_tool_error_with_its_output(tool_runner: ToolRunner) -> None:
    result = tool_runner.run_tool("s-1", "c-1", "run_command", {"command": "ls missing"})
    assert result.is_error
    assert result.text.startswith("exit code 2")
    assert "No such file or directory" in result.text


def test_missing_or_mistyped_arguments_are_tool_errors(tool_runner: ToolRunner) -> None:
    result = tool_runner.run_tool("s-1", "c-1", "write_file", {"path": "a.txt", "content": 5})
    assert result.is_error and "'content' is required and must be a string" in result.text
    missing = tool_runner.run_tool("s-1", "c-2", "read_file", {"path": "absent.txt"})
    assert missing.is_error and missing.text.startswith("read_file failed: no such file")


def test_an_unknown_tool_is_put_to_the_gate_and_never_runs(tool_runner, fake_gate) -> None:
    fake_gate.verdicts["format_disk"] = "deny"
    result = tool_runner.run_tool("s-1", "c-1", "format_disk", {})
    assert result.is_error
    assert fake_gate.requests_to("/permission")[0]["body"]["tool"] == "format_disk"


def test_a_brokered_tool_goes_through_the_broker_endpoint(tool_runner, fake_gate) -> None:
    fake_gate.brokered_results["jira.search"] = {
        "content": [{"type": "text", "text": "PROJ-1 login broken"}],
        "isError": False,
    }
    result = tool_runner.run_tool("s-1", "c-1", "jira.search", {"jql": "project = PROJ"})
    replay = tool_runner.run_tool("s-1", "c-1", "jira.search", {"jql": "project = PROJ"})
    assert not result.is_error and result.text == "PROJ-1 login broken"
    assert "already ran (replayed)" in replay.text


def test_a_finished_run_stops_the_agent_loop(tool_runner: ToolRunner) -> None:
    tool_runner.client.finish()
    with pytest.raises(GateAuthError):
        tool_runner.run_tool("s-1", "c-1", "read_file", {"path": "a"})
