"""The real Codex CLI, headless, behind fluidbox by configuration alone.

`python -m runner.agent_setup codex --trust` writes its hook (`.codex/hooks.json`) and MCP
server (`.codex/config.toml`); a scripted Responses API on 127.0.0.1 asks for one function
call per `codex exec`; fluidbox (gunicorn) decides.

Codex loads a project's `.codex/` only when the project is trusted, and runs a hook only once
the hook is trusted too; an untrusted hook does not run, silently, and the call then runs
ungated. Both trusts are the ones `--trust` persisted in $CODEX_HOME/config.toml: `codex exec`
runs with no flag that bypasses them. Codex's own sandbox and approvals are off
(`sandbox_mode`, `approval_policy`): fluidbox decides.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from django.db import connection

from governance.models import Approval, ToolCall
from governance.services.bundles import bundle_import
from governance.services.policies import policy_save
from ledger.models import Event
from tests.agents.agent_setup_command import run_agent_setup
from tests.agents.installed_clis import CODEX
from tests.agents.responses_server import ScriptedResponses
from tests.agents.terminal import Terminal
from tests.runner_live.conftest import InboxApprover, create_run
from tests.support.servers import ROOT

pytestmark = pytest.mark.slow

# Codex's shell and apply_patch meet the gate as run_command and write_file, the tools of
# the agent-CLI bundle.
BUNDLE = (ROOT / "runner" / "bundles" / "claude-code.yaml").read_text()

if not CODEX.exists():
    pytest.skip(f"Codex is not installed at {CODEX} (.ci/run installs it)", allow_module_level=True)


class Codex:
    def __init__(self, tmp: Path, model: ScriptedResponses, token: str, run_id: str) -> None:
        self.project = (tmp / "project").resolve()
        self.project.mkdir()
        self.home = (tmp / "home").resolve()
        self.codex_home = self.home / ".codex"
        self.codex_home.mkdir(parents=True)
        self.model = model
        self.log = tmp / "codex.log"
        # The user's own config: the scripted model as provider. Nothing is trusted yet:
        # agent_setup --trust does that.
        (self.codex_home / "config.toml").write_text(
            'model = "gpt-5"\n'
            'model_provider = "scripted"\n'
            'approval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n'
            "check_for_update_on_startup = false\n"
            "\n"
            "[model_providers.scripted]\n"
            'name = "scripted"\n'
            f'base_url = "{model.url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "SCRIPTED_API_KEY"\n'
        )
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "SCRIPTED_API_KEY": "sk-scripted",
            "FLUIDBOX_RUN_TOKEN": token,
            # The configuration names no run (so Codex's trust in the hook outlasts it):
            # the hook reads the run from here.
            "FLUIDBOX_RUN_ID": run_id,
        }

    def setup(self, url: str) -> str:
        return run_agent_setup(
            "codex", url, None, self.project, "--trust", "--codex", str(CODEX), home=self.home
        )

    def ask_for(self, call_id: str, name: str, arguments: dict) -> list[dict]:
        self.model.call = (call_id, name, arguments)
        done = subprocess.run(
            [
                str(CODEX),
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--ephemeral",
                "do the thing",
            ],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=360,
        )
        with self.log.open("a") as log:
            log.write(f"=== {call_id} rc={done.returncode}\n{done.stdout}\n{done.stderr}\n")
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert any(e.get("type") == "turn.completed" for e in events), (
            f"codex did not finish its turn (rc {done.returncode}): {done.stderr[-3000:]}"
        )
        return events


def stop_daemons_of(home: Path) -> None:
    """The TUI starts an app-server daemon from the user's `~/.codex/packages` that outlives
    it (`--managed-daemon`, detached): a test's user is gone with the test, so are its."""
    for process in Path("/proc").iterdir():
        try:
            executable = (process / "cmdline").read_bytes().split(b"\0", 1)[0].decode()
        except (OSError, UnicodeDecodeError):
            continue
        if process.name.isdigit() and executable.startswith(f"{home}/"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(process.name), signal.SIGKILL)


def output_text(model: ScriptedResponses, call_id: str) -> str:
    output = model.output_for(call_id)
    assert output is not None, f"the model never got an output for {call_id}"
    content = output.get("output")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content)
    return str(content)


def blocked(model: ScriptedResponses, call_id: str) -> bool:
    return "blocked by PreToolUse hook" in output_text(model, call_id)


@pytest.fixture
def demo_run(demo_org, operator) -> tuple[str, str]:
    """A run under the demo policy with the agent-CLI bundle and the demo tracker: (id,
    session token)."""
    policy_save(
        org=demo_org,
        author=None,
        text=(ROOT / "governance" / "demo" / "policy.yaml").read_text(),
    )
    bundle_import(org=demo_org, text=BUNDLE)
    return create_run(operator, bundles=["claude-code"], connections=["tracker"])


def test_codex_is_governed_by_fluidbox_through_its_hook_and_mcp_server(
    fluidbox_server, demo_run, approver_key, tmp_path
):
    run_id, token = demo_run
    with ScriptedResponses() as model:
        codex = Codex(tmp_path, model, token, run_id)
        try:
            printed = codex.setup(fluidbox_server.url)
            assert "PreToolUse" in printed and token not in printed and run_id not in printed
            assert "FLUIDBOX_RUN_ID=<the run's id>" in printed
            assert "fluidbox's hook" in printed and "trust_level" in printed
            precious = codex.project / "precious.txt"
            precious.write_text("keep me")

            # A policy-denied rm -rf on a real file: the hook denies, the file stays.
            codex.ask_for("call_rm_1", "exec_command", {"cmd": "rm -rf precious.txt"})
            # (Codex would refuse `rm -rf` by itself too; the hook comes first and says why.)
            assert blocked(model, "call_rm_1")
            assert "fluidbox" in output_text(model, "call_rm_1")
            assert precious.read_text() == "keep me"

            # An allowed ls runs: its output reaches the model.
            codex.ask_for("call_ls_1", "exec_command", {"cmd": "ls"})
            assert not blocked(model, "call_ls_1")
            assert "precious.txt" in output_text(model, "call_ls_1")

            # A brokered MCP call through fluidbox's MCP server reaches the demo tracker.
            mcp_tool = "mcp__fluidbox__tracker__list_issues"
            assert mcp_tool in model.offered_tools(), sorted(model.offered_tools())
            codex.ask_for("call_mcp_1", mcp_tool, {})
            assert '"title"' in output_text(model, "call_mcp_1")

            # An ASK (no rule matches `python3`): approved through the API while Codex waits
            # in the hook, then the command runs.
            approver = InboxApprover(fluidbox_server.url, approver_key, "run_command")
            approver.start()
            command = "python3 -c \"open('approved.txt', 'w').close()\""
            codex.ask_for("call_ask_1", "exec_command", {"cmd": command})
            approver.join(60)
            assert approver.decided is not None, approver.error
            assert not blocked(model, "call_ask_1")
            assert (codex.project / "approved.txt").exists()

            # Each call is in the ledger under Codex's call_id, decided once.
            calls = {c.tool_call_id: c for c in ToolCall.objects.filter(run_id=run_id)}
            assert (calls["call_rm_1"].tool, calls["call_rm_1"].decision) == (
                "run_command",
                "deny",
            )
            assert calls["call_rm_1"].source == "policy"
            assert (calls["call_ls_1"].tool, calls["call_ls_1"].decision) == (
                "run_command",
                "allow",
            )
            # The MCP call is decided once, by the endpoint (the hook leaves fluidbox's own
            # tools to it), under Codex's own call id: Codex sends it as `_meta.callId`.
            brokered = [c for c in calls.values() if c.tool == "tracker.list_issues"]
            assert len(brokered) == 1, brokered
            mcp_id = brokered[0].tool_call_id
            assert mcp_id == "call_mcp_1"
            assert (brokered[0].session_id, brokered[0].decision) == ("mcp", "allow")
            assert brokered[0].broker_status == "succeeded"
            assert calls["call_ask_1"].decision == "allow"
            assert (
                Approval.objects.get(run_id=run_id, tool_call_id="call_ask_1").status == "approved"
            )
            decided = [
                e.data["tool_call_id"]
                for e in Event.objects.filter(run_id=run_id, type="tool.decision")
            ]
            for call_id in ("call_rm_1", "call_ls_1", mcp_id, "call_ask_1"):
                assert decided.count(call_id) == 1, (call_id, decided)

            # Fail closed: fluidbox stopped mid-session, the next hook call denies.
            fluidbox_server.stop()
            codex.ask_for("call_after_stop", "exec_command", {"cmd": "touch after-stop.txt"})
            assert blocked(model, "call_after_stop")
            assert not (codex.project / "after-stop.txt").exists()
            assert "unreachable" in output_text(model, "call_after_stop")
        finally:
            (tmp_path / "requests.json").write_text(json.dumps(model.requests, indent=1))
    connection.close()


def test_without_the_trust_step_codex_never_asks_fluidbox(fluidbox_server, demo_run, tmp_path):
    # Why agent_setup prints the trust step, and --trust takes it: in a project it has not
    # trusted, Codex ignores `.codex/` and runs a call fluidbox denies (`rm *` is NEVER)
    # without a word to fluidbox. Only a file the test made is at stake.
    run_id, token = demo_run
    with ScriptedResponses() as model:
        codex = Codex(tmp_path, model, token, run_id)
        printed = run_agent_setup(
            "codex", fluidbox_server.url, None, codex.project, home=codex.home
        )
        assert "/hooks -> Trust all and continue" in printed and "--trust" in printed
        scratch = codex.project / "scratch.txt"
        scratch.write_text("a file the test made")
        codex.ask_for("call_rm_untrusted", "exec_command", {"cmd": "rm scratch.txt"})
        assert not blocked(model, "call_rm_untrusted")
        assert not scratch.exists()
        assert not ToolCall.objects.filter(run_id=run_id).exists()
    connection.close()


def test_interactive_codex_runs_the_hook_agent_setup_trusted(
    fluidbox_server, demo_run, approver_key, tmp_path
):
    # The TUI, on a pseudo-terminal, as people run it: no flag, and no trust question, since
    # agent_setup --trust persisted both trusts. Each prompt typed makes the model ask for one
    # call.
    run_id, token = demo_run
    with ScriptedResponses() as model:
        codex = Codex(tmp_path, model, token, run_id)
        codex.setup(fluidbox_server.url)
        precious = codex.project / "precious.txt"
        precious.write_text("keep me")
        terminal = Terminal([str(CODEX)], cwd=codex.project, env=codex.env)

        def ask(prompt: str, call: tuple) -> str:
            model.call = call
            terminal.converse(
                prompt,
                requests=model.requests,
                answered=lambda: model.output_for(call[0]) is not None,
            )
            return output_text(model, call[0])

        try:
            terminal.wait_for("Ask Codex to do anything")
            terminal.settle()
            told = ask("clean up", ("call_irm_1", "exec_command", {"cmd": "rm -rf precious.txt"}))
            assert "blocked by PreToolUse hook" in told and "fluidbox" in told
            assert precious.read_text() == "keep me"

            assert "precious.txt" in ask("list", ("call_ils_1", "exec_command", {"cmd": "ls"}))

            approver = InboxApprover(fluidbox_server.url, approver_key, "run_command")
            approver.start()
            command = "python3 -c \"open('approved.txt', 'w').close()\""
            ask("make the file", ("call_iask_1", "exec_command", {"cmd": command}))
            approver.join(60)
            assert approver.decided is not None, approver.error
            assert (codex.project / "approved.txt").exists()
        finally:
            terminal.close()
            stop_daemons_of(codex.home)
    calls = {c.tool_call_id: c for c in ToolCall.objects.filter(run_id=run_id)}
    assert (calls["call_irm_1"].decision, calls["call_irm_1"].source) == ("deny", "policy")
    assert calls["call_ils_1"].decision == "allow"
    assert Approval.objects.get(run_id=run_id, tool_call_id="call_iask_1").status == "approved"
    connection.close()
