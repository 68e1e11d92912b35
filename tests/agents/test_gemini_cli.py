"""The real Gemini CLI, headless, behind fluidbox by configuration alone.

`python -m runner.agent_setup gemini-cli` writes its `BeforeTool` hook and MCP server entry;
a scripted Gemini API on 127.0.0.1 asks for one tool per session; fluidbox (gunicorn)
decides.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from django.db import connection

from governance.models import Approval, ToolCall
from governance.services.bundles import bundle_import
from ledger.models import Event
from tests.agents.agent_setup_command import run_agent_setup
from tests.agents.gemini_server import ScriptedGemini
from tests.agents.installed_clis import GEMINI_CLI
from tests.agents.terminal import Terminal
from tests.runner_live.conftest import InboxApprover, create_run
from tests.support.servers import ROOT
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

GEMINI = GEMINI_CLI
# Gemini CLI's tools become the gate tools of the claude-code bundle (runner/agent_tools.py).
BUNDLE = (ROOT / "runner" / "bundles" / "claude-code.yaml").read_text()
MODEL = "gemini-2.5-flash"

if not GEMINI.exists():
    pytest.skip(
        f"Gemini CLI is not installed at {GEMINI} (.ci/run installs it)", allow_module_level=True
    )

# The user's own settings (in the CLI's HOME): the API key as the way in, nothing sent
# anywhere but the scripted model. What governs the CLI is the project's settings, written
# by agent_setup.
USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "ide": {"enabled": False},
}


class GeminiCli:
    def __init__(self, tmp: Path, model: ScriptedGemini, token: str) -> None:
        self.project = tmp / "project"
        self.project.mkdir()
        self.home = tmp / "home"
        (self.home / ".gemini").mkdir(parents=True)
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(USER_SETTINGS))
        self.model = model
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.home),
            "GEMINI_API_KEY": "scripted",
            "GOOGLE_GEMINI_BASE_URL": model.url,
            "GEMINI_TELEMETRY_ENABLED": "false",
            "NO_COLOR": "1",
            # As on GitHub Actions: the CLI then strips variables named like secrets from
            # a hook's environment, unless the settings let them through (agent_setup does).
            "GITHUB_SHA": "0" * 40,
            # The folder is trusted by agent_setup --trust (in $HOME/.gemini), so the CLI
            # loads the project's settings (the hook, the MCP server). Not `--skip-trust`:
            # the CLI reads that flag after it has loaded the settings and runs, trusted,
            # without the project's hooks and MCP servers.
            "FLUIDBOX_RUN_TOKEN": token,
        }
        self.runs: list[subprocess.CompletedProcess] = []

    def setup(self, url: str, run_id: str) -> str:
        return run_agent_setup("gemini-cli", url, run_id, self.project, "--trust", home=self.home)

    def ask_for(self, call_id: str, name: str, args: dict) -> dict[str, dict]:
        """One headless session whose model asks for one call; its stream-json events by
        kind (`init`, `tool_use` and `tool_result` of that call, `result`)."""
        self.model.call = (call_id, name, args)
        done = subprocess.run(
            [
                str(GEMINI),
                "-p",
                "do the thing",
                "--output-format",
                "stream-json",
                "--model",
                MODEL,
                # The CLI's own confirmations never block; fluidbox's hook decides.
                "--approval-mode",
                "yolo",
            ],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        self.runs.append(done)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        asked = [f"{r['method']} {r['path']}" for r in self.model.requests]
        assert events, f"gemini printed nothing ({done.returncode}): {done.stderr[-3000:]} {asked}"
        mine = {}
        for event in events:
            if event.get("type") in ("tool_use", "tool_result"):
                if str(event.get("tool_id", "")).endswith(call_id):
                    mine[event["type"]] = event
            elif event.get("type") in ("init", "result"):
                mine[event["type"]] = event
        return mine


def result_text(model: ScriptedGemini, call_id: str) -> str:
    """What the model was told of the call (its `functionResponse`)."""
    result = model.result_for(call_id)
    assert result is not None, f"the model never got a result for {call_id}"
    return json.dumps(result)


HOOK_ID = re.compile(r"hook-[0-9a-f]{32}")


@pytest.fixture
def gemini_run(fluidbox_server, demo_org, operator, tmp_path):
    """A run with the claude-code bundle and the demo tracker; Gemini CLI set up for it by
    `agent_setup` alone, its model scripted: (the CLI, the model, the run id)."""
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(operator, bundles=["claude-code"], connections=["tracker"])
    with ScriptedGemini() as model:
        gemini = GeminiCli(tmp_path, model, token)
        printed = gemini.setup(fluidbox_server.url, run_id)
        assert "BeforeTool" in printed and token not in printed
        settings = json.loads((gemini.project / ".gemini" / "settings.json").read_text())
        assert settings["security"]["environmentVariableRedaction"]["allowed"] == [
            "FLUIDBOX_RUN_TOKEN"
        ]
        yield gemini, model, run_id
    connection.close()


def test_gemini_cli_is_governed_by_fluidbox_through_its_hook(
    gemini_run, fluidbox_server, approver_key
):
    gemini, model, run_id = gemini_run
    precious = gemini.project / "precious.txt"
    precious.write_text("keep me")
    sessions: dict[str, str] = {}

    # A policy-denied rm -rf on a real file: the hook denies, the file stays.
    events = gemini.ask_for("gem_rm_1", "run_shell_command", {"command": f"rm -rf {precious}"})
    sessions["gem_rm_1"] = events["init"]["session_id"]
    assert events["tool_result"]["status"] == "error"
    assert precious.read_text() == "keep me"
    assert "Tool execution blocked" in result_text(model, "gem_rm_1")
    assert "fluidbox" in result_text(model, "gem_rm_1")

    # An allowed ls runs: its output reaches the model.
    events = gemini.ask_for("gem_ls_1", "run_shell_command", {"command": "ls"})
    sessions["gem_ls_1"] = events["init"]["session_id"]
    assert events["tool_result"]["status"] == "success"
    assert "precious.txt" in result_text(model, "gem_ls_1")

    # An ASK (no rule matches `python3`): approved through the API while Gemini CLI
    # waits in the hook, then the command runs.
    approver = InboxApprover(fluidbox_server.url, approver_key, "run_command")
    approver.start()
    command = "python3 -c \"open('approved.txt', 'w').close()\""
    events = gemini.ask_for("gem_ask_1", "run_shell_command", {"command": command})
    sessions["gem_ask_1"] = events["init"]["session_id"]
    approver.join(60)
    assert approver.decided is not None, approver.error
    assert events["tool_result"]["status"] == "success"
    assert (gemini.project / "approved.txt").exists()

    # Each call is in the ledger, decided once. Gemini CLI's BeforeTool hook input has
    # no call id (its own, `<tool>__<model's id>`, stays inside the CLI): the hook
    # records each call under an id of its own, `hook-<uuid hex>`, in the CLI's session.
    calls = {
        name: ToolCall.objects.get(run_id=run_id, session_id=session)
        for name, session in sessions.items()
    }
    assert all(HOOK_ID.fullmatch(c.tool_call_id) for c in calls.values())
    assert (calls["gem_rm_1"].tool, calls["gem_rm_1"].decision) == ("run_command", "deny")
    assert calls["gem_rm_1"].source == "policy"
    assert calls["gem_rm_1"].arguments == {"command": f"rm -rf {precious}"}
    assert (calls["gem_ls_1"].tool, calls["gem_ls_1"].decision) == ("run_command", "allow")
    assert calls["gem_ask_1"].decision == "allow"
    approval = Approval.objects.get(run_id=run_id, tool_call_id=calls["gem_ask_1"].tool_call_id)
    assert approval.status == "approved"
    decided = [
        e.data["tool_call_id"] for e in Event.objects.filter(run_id=run_id, type="tool.decision")
    ]
    for call in calls.values():
        assert decided.count(call.tool_call_id) == 1, call.tool_call_id

    # Fail closed: fluidbox stopped mid-session, the next hook call denies.
    fluidbox_server.stop()
    events = gemini.ask_for(
        "gem_after_stop", "run_shell_command", {"command": "touch after-stop.txt"}
    )
    assert events["tool_result"]["status"] == "error"
    assert not (gemini.project / "after-stop.txt").exists()
    assert "unreachable" in result_text(model, "gem_after_stop")


def test_gemini_cli_calls_brokered_tools_through_fluidbox_mcp_server(gemini_run):
    gemini, model, run_id = gemini_run
    gemini.ask_for("gem_nothing", "no_such_tool", {})  # a session that only lists the tools
    assert "mcp_fluidbox_tracker__list_issues" in model.offered_tools()

    # A brokered MCP call through fluidbox's MCP server reaches the demo tracker. The hook
    # leaves it to the endpoint, which records it once, under an id of its own (Gemini CLI
    # sends no call id in the request's `_meta`).
    events = gemini.ask_for("gem_mcp_1", "mcp_fluidbox_tracker__list_issues", {})
    assert events["tool_result"]["status"] == "success"
    assert "Login page times out" in result_text(model, "gem_mcp_1")  # the demo tracker's issue
    (call,) = ToolCall.objects.filter(run_id=run_id)
    assert (call.tool, call.session_id, call.decision) == ("tracker.list_issues", "mcp", "allow")
    assert re.fullmatch(r"mcp-[0-9a-f]{32}", call.tool_call_id)
    assert call.broker_status == "succeeded"


# Interactive, as people run it: on a terminal, in the folder `agent_setup --trust` trusted,
# Gemini CLI's own approval mode its default. Its hook comes first: a call fluidbox denies
# never runs, and one fluidbox allows still meets the CLI's own confirmation where the CLI
# asks for one (not for `ls`, which it takes for read-only).


def ask_on_terminal(terminal: Terminal, model: ScriptedGemini, prompt: str, call: tuple) -> str:
    """Type a prompt whose answer is the tool call `call`; what the model was told of it."""
    model.call = call
    terminal.converse(
        prompt, requests=model.requests, answered=lambda: model.result_for(call[0]) is not None
    )
    return result_text(model, call[0])


def test_interactive_gemini_cli_is_governed_by_fluidbox(gemini_run, fluidbox_server, approver_key):
    gemini, model, run_id = gemini_run
    precious = gemini.project / "precious.txt"
    precious.write_text("keep me")
    terminal = Terminal([str(GEMINI), "--model", MODEL], cwd=gemini.project, env=gemini.env)
    try:
        # The folder is trusted: the project's hook is loaded, and Gemini CLI says so.
        terminal.wait_for("The following project-level hooks have been detected")
        terminal.wait_for("- fluidbox")  # the hook's name, as agent_setup wrote it
        terminal.settle()

        # A policy-denied rm -rf: the hook denies, the file stays, the model reads why.
        rm = ("gem_irm_1", "run_shell_command", {"command": f"rm -rf {precious}"})
        told = ask_on_terminal(terminal, model, "clean up", rm)
        assert "fluidbox" in told
        assert precious.read_text() == "keep me"

        # An allowed ls runs.
        told = ask_on_terminal(
            terminal, model, "list the files", ("gem_ils_1", "run_shell_command", {"command": "ls"})
        )
        assert "precious.txt" in told

        # An ASK: Gemini CLI waits in the hook while an approver decides in fluidbox.
        approver = InboxApprover(fluidbox_server.url, approver_key, "run_command")
        approver.start()
        command = "python3 -c \"open('approved.txt', 'w').close()\""
        model.call = ("gem_iask_1", "run_shell_command", {"command": command})
        asked = len(model.requests)
        terminal.submit("make the file", received=lambda: len(model.requests) > asked)
        approver.join(60)
        assert approver.decided is not None, approver.error
        # Approved in fluidbox, the command is one Gemini CLI asks its user about too (it
        # does not take it for read-only): both must agree.
        terminal.wait_for("Allow execution of [Shell]?")
        terminal.choose("1. Allow once", then="✓", pointer="●")
        wait_until(lambda: model.result_for("gem_iask_1") is not None, "a result for gem_iask_1")
        assert (gemini.project / "approved.txt").exists()
    finally:
        terminal.close()

    # One interactive session: every call in it, each under an id of the hook's own (Gemini
    # CLI gives its hook no call id), decided once.
    calls = list(ToolCall.objects.filter(run_id=run_id).order_by("created_at"))
    assert len({call.session_id for call in calls}) == 1
    assert all(HOOK_ID.fullmatch(call.tool_call_id) for call in calls)
    assert [(c.arguments["command"], c.decision) for c in calls] == [
        (f"rm -rf {precious}", "deny"),
        ("ls", "allow"),
        (command, "allow"),
    ]
    approval = Approval.objects.get(run_id=run_id, tool_call_id=calls[2].tool_call_id)
    assert approval.status == "approved"
