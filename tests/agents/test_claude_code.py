"""The real Claude Code CLI, headless, behind fluidbox by configuration alone.

`python -m runner.agent_setup claude-code` writes its hook and MCP server entry; a scripted
model on 127.0.0.1 asks for one tool per session; fluidbox (gunicorn) decides.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from django.db import connection

from governance.models import Approval, ToolCall
from governance.services.bundles import bundle_import
from governance.services.policies import policy_save
from ledger.models import Event
from tests.agents.agent_setup_command import run_agent_setup
from tests.agents.installed_clis import CLAUDE_CODE
from tests.agents.model_server import ScriptedModel
from tests.runner_live.conftest import InboxApprover, create_run
from tests.support.servers import ROOT

pytestmark = pytest.mark.slow

CLAUDE = CLAUDE_CODE
BUNDLE = (ROOT / "runner" / "bundles" / "claude-code.yaml").read_text()

if not CLAUDE.exists():
    pytest.skip(
        f"Claude Code is not installed at {CLAUDE} (.ci/run installs it)", allow_module_level=True
    )


class ClaudeCode:
    def __init__(self, tmp: Path, model: ScriptedModel, token: str) -> None:
        self.project = tmp / "project"
        self.project.mkdir()
        self.home = tmp / "home"
        self.home.mkdir()
        self.model = model
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.home),
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "sk-ant-scripted",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "MCP_CONNECTION_NONBLOCKING": "false",
            "ENABLE_TOOL_SEARCH": "false",
            "FLUIDBOX_RUN_TOKEN": token,
        }

    def setup(self, url: str, run_id: str) -> str:
        return run_agent_setup("claude-code", url, run_id, self.project)

    def ask_for(self, tool_id: str, name: str, tool_input: dict, *options: str) -> dict:
        self.model.tool_use = (tool_id, name, tool_input)
        done = subprocess.run(
            [
                str(CLAUDE),
                "-p",
                "do the thing",
                "--output-format",
                "json",
                "--model",
                "claude-sonnet-4-5",
                *options,
            ],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.stdout.strip(), f"claude printed nothing: {done.stderr[-2000:]}"
        return json.loads(done.stdout.strip().splitlines()[-1])


def claude_code_run(org, operator, rules: str) -> tuple[str, str]:
    """A run of the `claude-code` bundle under the demo policy with `rules` (YAML list items)
    put first: its id and session token."""
    demo_policy = (ROOT / "governance" / "demo" / "policy.yaml").read_text()
    policy_save(org=org, author=None, text=demo_policy.replace("rules:\n", "rules:\n" + rules, 1))
    bundle_import(org=org, text=BUNDLE)
    return create_run(operator, bundles=["claude-code"], connections=["tracker"])


def denial_ids(result: dict) -> set[str]:
    return {d.get("tool_use_id") for d in result.get("permission_denials") or []}


def result_text(model: ScriptedModel, tool_id: str) -> str:
    result = model.result_for(tool_id)
    assert result is not None, f"the model never got a result for {tool_id}"
    content = result.get("content")
    if isinstance(content, list):
        return " ".join(str(block.get("text", "")) for block in content)
    return str(content)


def test_claude_code_is_governed_by_fluidbox_through_its_hook_and_mcp_server(
    fluidbox_server, demo_org, operator, approver_key, tmp_path
):
    # The demo policy, with Glob (find_files) allowed in the project and nowhere else.
    project = (tmp_path / "project").resolve()
    find_rules = (
        f'  - {{pattern: "find_files:{project}", action: ALWAYS}}\n'
        '  - {pattern: "find_files:*", action: NEVER}\n'
        '  - {pattern: "run_command:printf *", action: ALWAYS}\n'
        f'  - {{pattern: "write_file:{project}/*", action: ALWAYS}}\n'
    )
    run_id, token = claude_code_run(demo_org, operator, find_rules)
    with ScriptedModel() as model:
        claude = ClaudeCode(tmp_path, model, token)
        printed = claude.setup(fluidbox_server.url, run_id)
        assert "disableBypassPermissionsMode" in printed and token not in printed
        settings = json.loads((claude.project / ".claude" / "settings.json").read_text())
        assert settings["permissions"]["disableBypassPermissionsMode"] == "disable"
        assert settings["disableSkillShellExecution"] is True
        precious = claude.project / "precious.txt"
        precious.write_text("keep me")

        # A policy-denied rm -rf on a real file: the hook denies, the file stays. (Relative:
        # Claude Code refuses an absolute `rm -rf` by itself, before any hook is asked.)
        result = claude.ask_for("toolu_rm_1", "Bash", {"command": "rm -rf precious.txt"})
        assert "toolu_rm_1" in denial_ids(result)
        assert precious.read_text() == "keep me"
        assert "Permission denied" in result_text(model, "toolu_rm_1")

        # An allowed ls runs: its output reaches the model.
        result = claude.ask_for("toolu_ls_1", "Bash", {"command": "ls"})
        assert "toolu_ls_1" not in denial_ids(result)
        assert "precious.txt" in result_text(model, "toolu_ls_1")

        # Glob with an absolute pattern lists another directory (Claude Code lists /etc for
        # `/etc/host*`, whatever its working directory): the hook asks about the directory
        # the pattern reaches as well as the project, and the policy's NEVER for it holds.
        # (This version offers the model no Glob unless a setting names it.)
        assert "Glob" not in model.offered_tools()
        glob = ("--allowedTools", "Glob")
        result = claude.ask_for("toolu_glob_1", "Glob", {"pattern": "/etc/host*"}, *glob)
        assert "toolu_glob_1" in denial_ids(result)
        assert "/etc/hosts" not in result_text(model, "toolu_glob_1")
        # Inside the project, Glob runs.
        result = claude.ask_for("toolu_glob_2", "Glob", {"pattern": "*.txt"}, *glob)
        assert "toolu_glob_2" not in denial_ids(result)
        assert "precious.txt" in result_text(model, "toolu_glob_2")

        # A brokered MCP call through fluidbox's MCP server reaches the demo tracker.
        assert "mcp__fluidbox__tracker__list_issues" in model.offered_tools()
        result = claude.ask_for("toolu_mcp_1", "mcp__fluidbox__tracker__list_issues", {})
        assert "toolu_mcp_1" not in denial_ids(result)
        assert '"title"' in result_text(model, "toolu_mcp_1")

        # An ASK (no rule matches `python3`): approved through the API while Claude Code
        # waits in the hook, then the command runs. (Not `touch approved.txt`: a relative
        # write meets the demo policy's `write_file:*` NEVER, the working directory being
        # unknown to the policy.)
        approver = InboxApprover(fluidbox_server.url, approver_key, "run_command")
        approver.start()
        command = "python3 -c \"open('approved.txt', 'w').close()\""
        result = claude.ask_for("toolu_ask_1", "Bash", {"command": command})
        approver.join(60)
        assert approver.decided is not None, approver.error
        assert "toolu_ask_1" not in denial_ids(result)
        assert (claude.project / "approved.txt").exists()

        # A write the policy allows in the project (printf, then `>>` a project file) runs;
        # the same write through a link planted earlier to a file outside is refused: the
        # hook reports the link, the gate judges where it leads.
        plain = f"printf 'one' >> {project}/plain.txt"
        result = claude.ask_for("toolu_plain_1", "Bash", {"command": plain})
        assert "toolu_plain_1" not in denial_ids(result)
        assert (claude.project / "plain.txt").read_text() == "one"
        outside = tmp_path / "outside.txt"
        outside.write_text("keep me")
        (claude.project / "notes").symlink_to("../outside.txt")
        linked = f"printf 'two' >> {project}/notes"
        result = claude.ask_for("toolu_link_1", "Bash", {"command": linked})
        assert "toolu_link_1" in denial_ids(result)
        assert outside.read_text() == "keep me"

        # Each call is in the ledger under Claude Code's tool_use_id, decided once.
        calls = {c.tool_call_id: c for c in ToolCall.objects.filter(run_id=run_id)}
        assert (calls["toolu_rm_1"].tool, calls["toolu_rm_1"].decision) == ("run_command", "deny")
        assert calls["toolu_rm_1"].source == "policy"
        assert calls["toolu_ls_1"].decision == "allow"
        globbed = [calls[f"toolu_glob_1#{n}"] for n in (1, 2)]
        assert [(c.tool, c.arguments["path"], c.decision) for c in globbed] == [
            ("find_files", str(project), "allow"),
            ("find_files", "/etc", "deny"),
        ]
        assert (calls["toolu_glob_2"].arguments["path"], calls["toolu_glob_2"].decision) == (
            str(project),
            "allow",
        )
        assert (calls["toolu_mcp_1"].tool, calls["toolu_mcp_1"].session_id) == (
            "tracker.list_issues",
            "mcp",
        )
        assert calls["toolu_mcp_1"].broker_status == "succeeded"
        assert calls["toolu_ask_1"].decision == "allow"
        assert calls["toolu_plain_1"].decision == "allow"
        assert "links_on_disk" not in calls["toolu_plain_1"].arguments
        assert calls["toolu_link_1"].decision == "deny"
        assert calls["toolu_link_1"].arguments["links_on_disk"]["targets"] == {
            str(project / "notes"): str(project / "../outside.txt")
        }
        assert Approval.objects.get(run_id=run_id, tool_call_id="toolu_ask_1").status == "approved"
        decided = [
            e.data["tool_call_id"]
            for e in Event.objects.filter(run_id=run_id, type="tool.decision")
        ]
        for tool_id in ("toolu_rm_1", "toolu_ls_1", "toolu_mcp_1", "toolu_ask_1", "toolu_link_1"):
            assert decided.count(tool_id) == 1, tool_id

        # Fail closed: fluidbox stopped mid-session, the next hook call denies.
        fluidbox_server.stop()
        result = claude.ask_for("toolu_after_stop", "Bash", {"command": "touch after-stop.txt"})
        assert "toolu_after_stop" in denial_ids(result)
        assert not (claude.project / "after-stop.txt").exists()
        assert "unreachable" in result_text(model, "toolu_after_stop")
    connection.close()
