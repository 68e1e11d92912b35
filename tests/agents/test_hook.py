"""`python -m runner.hook` as agent CLIs run it: JSON in, the CLI's answer out, fail closed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from governance.models import ToolCall
from governance.services.bundles import bundle_import
from tests.mcp_servers.fixtures import free_port
from tests.runner_live.conftest import create_run
from tests.support.servers import ROOT

BUNDLE = (ROOT / "runner" / "bundles" / "claude-code.yaml").read_text()
# The home of a user with nothing of the CLIs' own set up, no shell start-up files either:
# asked without `--known-commands`, the hook knows of none that were there at setup.
EMPTY_HOME = Path(tempfile.mkdtemp(prefix="fluidbox-hook-home-"))


def hook(
    dialect: str,
    event: dict,
    *,
    url: str,
    run_id: str,
    token: str | None,
    options: tuple[str, ...] = (),
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    launched_with: tuple[str, ...] = (),
) -> dict:
    """The hook's answer; `cwd` is where the CLI starts it (Codex: the project's folder), `env`
    what the CLI adds to its environment (Claude Code: CLAUDE_PROJECT_DIR); `launched_with`,
    the words of the CLI's own command line (the hook then runs under a process that has
    them, as it runs under the CLI)."""
    extra = env or {}
    env = {k: v for k, v in os.environ.items() if k != "FLUIDBOX_RUN_TOKEN"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["HOME"] = str(EMPTY_HOME)
    env.update(extra)
    if token is not None:
        env["FLUIDBOX_RUN_TOKEN"] = token
    argv = [sys.executable, "-m", "runner.hook", dialect, "--url", url, "--run", run_id, *options]
    if launched_with:
        run_the_rest = (
            "import subprocess, sys; sys.exit(subprocess.call(sys.argv[sys.argv.index('--') + 1:]))"
        )
        argv = [sys.executable, "-c", run_the_rest, *launched_with, "--", *argv]
    done = subprocess.run(
        argv,
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def claude_decision(answer: dict) -> tuple[str, str]:
    output = answer["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse"
    return output["permissionDecision"], output["permissionDecisionReason"]


def bash(command: str, tool_use_id: str) -> dict:
    return {
        "session_id": "s-claude",
        "cwd": "/workspace",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": tool_use_id,
    }


def test_without_a_token_the_hook_denies():
    answer = hook("claude-code", bash("ls", "t1"), url="http://127.0.0.1:9", run_id="r", token=None)
    decision, reason = claude_decision(answer)
    assert decision == "deny" and "FLUIDBOX_RUN_TOKEN" in reason


def test_without_a_run_anywhere_the_hook_denies():
    env = {k: v for k, v in os.environ.items() if k != "FLUIDBOX_RUN_ID"}
    done = subprocess.run(
        [sys.executable, "-m", "runner.hook", "claude-code", "--url", "http://127.0.0.1:9"],
        input=json.dumps(bash("ls", "t1")),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**env, "FLUIDBOX_RUN_TOKEN": "fbr_x"},
        timeout=120,
    )
    decision, reason = claude_decision(json.loads(done.stdout))
    assert decision == "deny" and "FLUIDBOX_RUN_ID" in reason


def test_an_unreachable_fluidbox_denies():
    url = f"http://127.0.0.1:{free_port()}"
    answer = hook("claude-code", bash("ls", "t1"), url=url, run_id="r", token="fbr_x")
    decision, reason = claude_decision(answer)
    assert decision == "deny" and "unreachable" in reason


def test_garbage_on_stdin_denies():
    done = subprocess.run(
        [sys.executable, "-m", "runner.hook", "claude-code", "--url", "http://x", "--run", "r"],
        input="not json",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert claude_decision(json.loads(done.stdout))[0] == "deny"


@pytest.mark.slow
def test_each_dialect_asks_the_gate_under_the_cli_tool_use_id(fluidbox_server, demo_org, operator):
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(operator, bundles=["claude-code"], connections=["tracker"])
    url = fluidbox_server.url

    decision, reason = claude_decision(
        hook(
            "claude-code", bash("ls -la; rm -rf /", "toolu_1"), url=url, run_id=run_id, token=token
        )
    )
    assert decision == "deny" and "policy" in reason
    decision, _ = claude_decision(
        hook("claude-code", bash("ls", "toolu_2"), url=url, run_id=run_id, token=token)
    )
    assert decision == "allow"

    edit = {
        "session_id": "s-claude",
        "cwd": "/workspace",
        "tool_name": "Edit",
        "tool_input": {"file_path": "/etc/passwd", "old_string": "root", "new_string": "toor"},
        "tool_use_id": "toolu_3",
    }
    decision, _ = claude_decision(hook("claude-code", edit, url=url, run_id=run_id, token=token))
    assert decision == "deny"
    recorded = ToolCall.objects.get(run_id=run_id, tool_call_id="toolu_3")
    assert recorded.tool == "write_file"
    assert recorded.arguments == {
        "path": "/etc/passwd",
        "edits": [{"old_string": "root", "new_string": "toor"}],
    }

    unmapped = {**bash("", "toolu_4"), "tool_name": "TodoWrite", "tool_input": {"todos": []}}
    decision, reason = claude_decision(
        hook("claude-code", unmapped, url=url, run_id=run_id, token=token)
    )
    assert decision == "deny" and "not in this run's frozen tool set" in reason

    # fluidbox's own MCP tools are the endpoint's to decide: no record here.
    own = {
        **bash("", "toolu_5"),
        "tool_name": "mcp__fluidbox__tracker__create_issue",
        "tool_input": {"title": "x"},
    }
    decision, _ = claude_decision(hook("claude-code", own, url=url, run_id=run_id, token=token))
    assert decision == "allow"
    assert not ToolCall.objects.filter(run_id=run_id, tool_call_id="toolu_5").exists()

    gemini = {
        "session_id": "s-gemini",
        "cwd": "/workspace",
        "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "rm -rf /"},
    }
    answer = hook("gemini-cli", gemini, url=url, run_id=run_id, token=token)
    assert answer["decision"] == "deny" and "policy" in answer["reason"]

    codex = {
        "session_id": "s-codex",
        "cwd": str(ROOT),  # where Codex starts its hooks: a call run elsewhere is a `cd` there
        "tool_name": "shell_command",
        "tool_input": {"command": ["git", "status"]},
        "tool_use_id": "call_codex_1",
    }
    decision, _ = claude_decision(hook("codex", codex, url=url, run_id=run_id, token=token))
    assert decision == "allow"
    assert ToolCall.objects.get(run_id=run_id, tool_call_id="call_codex_1").arguments == {
        "command": "git status"
    }

    assert operator.post(f"/v1/runs/{run_id}/finish").status_code == 200
    decision, reason = claude_decision(
        hook("claude-code", bash("ls", "toolu_6"), url=url, run_id=run_id, token=token)
    )
    assert decision == "deny" and "token" in reason


@pytest.mark.slow
def test_another_mcp_server_named_like_fluidbox_is_asked_of_the_gate(
    fluidbox_server, demo_org, operator
):
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(operator, bundles=["claude-code"], connections=["tracker"])
    url = fluidbox_server.url
    # A server the agent's user added as `fluidbox__evilserver` (or `fluidbox evilserver`).
    lookalike = {
        **bash("", "toolu_evil"),
        "tool_name": "mcp__fluidbox__evilserver__delete_all",
        "tool_input": {},
    }

    decision, reason = claude_decision(
        hook("claude-code", lookalike, url=url, run_id=run_id, token=token)
    )

    assert decision == "deny" and "not in this run's frozen tool set" in reason
    recorded = ToolCall.objects.get(run_id=run_id, tool_call_id="toolu_evil")
    assert recorded.tool == "mcp__fluidbox__evilserver__delete_all"

    gemini = {
        "session_id": "s-gemini",
        "cwd": "/workspace",
        "tool_name": "delete_all",
        "tool_input": {},
        "mcp_context": {"server_name": "fluidbox", "tool_name": "evilserver__delete_all"},
    }
    answer = hook("gemini-cli", gemini, url=url, run_id=run_id, token=token)
    assert answer["decision"] == "deny"
    assert (
        ToolCall.objects.filter(run_id=run_id, tool="mcp__fluidbox__evilserver__delete_all").count()
        == 2
    )

    listed = {**bash("", "toolu_listed"), "tool_name": "mcp__fluidbox__tracker__list_issues"}
    decision, _ = claude_decision(hook("claude-code", listed, url=url, run_id=run_id, token=token))
    assert decision == "allow"
    assert not ToolCall.objects.filter(run_id=run_id, tool_call_id="toolu_listed").exists()


@pytest.mark.slow
def test_a_server_of_the_cli_named_like_a_connection_gets_no_permission(
    fluidbox_server, demo_org, operator
):
    """The user adds their own MCP server as `tracker` to the CLI. Asked of the gate as the
    connection's `tracker.list_issues`, which the policy allows, the call would run on that
    server: no broker, no binding re-check, no sealed credential, no record of what it did.
    It is asked under the CLI's name instead, which the run did not freeze."""
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(operator, bundles=["claude-code"], connections=["tracker"])
    url = fluidbox_server.url
    impostor = {
        **bash("", "toolu_impostor"),
        "tool_name": "mcp__tracker__list_issues",
        "tool_input": {},
    }

    decision, reason = claude_decision(
        hook("claude-code", impostor, url=url, run_id=run_id, token=token)
    )

    assert decision == "deny" and "not in this run's frozen tool set" in reason
    recorded = ToolCall.objects.get(run_id=run_id, tool_call_id="toolu_impostor")
    assert (recorded.tool, recorded.decision, recorded.source) == (
        "mcp__tracker__list_issues",
        "deny",
        "capability",
    )
    gemini = {
        "session_id": "s-gemini",
        "cwd": "/workspace",
        "tool_name": "list_issues",
        "tool_input": {},
        "mcp_context": {"server_name": "tracker", "tool_name": "list_issues"},
    }
    answer = hook("gemini-cli", gemini, url=url, run_id=run_id, token=token)
    assert answer["decision"] == "deny" and "frozen tool set" in answer["reason"]
    assert not ToolCall.objects.filter(run_id=run_id, tool="tracker.list_issues").exists()
    # The same tool through fluidbox's own server is the endpoint's, and allowed there.
    listed = {**bash("", "toolu_real"), "tool_name": "mcp__fluidbox__tracker__list_issues"}
    decision, _ = claude_decision(hook("claude-code", listed, url=url, run_id=run_id, token=token))
    assert decision == "allow"
