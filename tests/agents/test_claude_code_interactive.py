"""The real Claude Code CLI as people run it: interactive, on a terminal, behind fluidbox by
`agent_setup` alone.

What a returning user's `~/.claude.json` holds is given (onboarding done, the API key
accepted); the folder is not trusted yet. Claude Code asks whether to trust it (the only
other answer is to exit), and only then reads `.claude/settings.json`, fluidbox's hook
included. Each prompt typed makes the scripted model ask for one tool call.
"""

from __future__ import annotations

import json

import pytest
from django.db import connection

from governance.models import Approval, ToolCall
from governance.services.bundles import bundle_import
from governance.services.policies import policy_save
from tests.agents.model_server import ScriptedModel
from tests.agents.terminal import ENTER, Terminal
from tests.agents.test_claude_code import BUNDLE, CLAUDE, ClaudeCode, result_text
from tests.runner_live.conftest import InboxApprover, create_run
from tests.support.servers import ROOT

pytestmark = pytest.mark.slow


def returning_user(claude: ClaudeCode) -> None:
    """Past the first-start screens (onboarding, "use this API key?"), as after a first
    session; folder trust is not given."""
    (claude.home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "customApiKeyResponses": {"approved": ["sk-ant-scripted"], "rejected": []},
            }
        )
    )


def ask(terminal: Terminal, model: ScriptedModel, prompt: str, tool_use: tuple) -> str:
    """Type a prompt whose answer is the tool call `tool_use`; what the model was told of it."""
    model.tool_use = tool_use
    terminal.converse(
        prompt, requests=model.requests, answered=lambda: model.result_for(tool_use[0]) is not None
    )
    return result_text(model, tool_use[0])


def test_interactive_claude_code_is_governed_once_its_user_trusts_the_folder(
    fluidbox_server, demo_org, operator, approver_key, tmp_path
):
    policy_save(
        org=demo_org,
        author=None,
        text=(ROOT / "governance" / "demo" / "policy.yaml").read_text(),
    )
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(operator, bundles=["claude-code"], connections=["tracker"])
    with ScriptedModel() as model:
        claude = ClaudeCode(tmp_path, model, token)
        claude.setup(fluidbox_server.url, run_id)
        returning_user(claude)
        precious = claude.project / "precious.txt"
        precious.write_text("keep me")
        terminal = Terminal(
            [str(CLAUDE), "--model", "claude-sonnet-4-5"], cwd=claude.project, env=claude.env
        )
        try:
            # Nothing runs before the folder is trusted; trusting it loads the hook.
            terminal.wait_for("Trusting this folder loads .claude/settings.json")
            terminal.wait_for("Yes, I trust this folder")
            assert not model.requests
            terminal.choose("Yes, I trust this folder", then="? for shortcuts")

            # A policy-denied rm -rf: the hook denies, the file stays, the model reads why.
            rm = ("toolu_irm_1", "Bash", {"command": "rm -rf precious.txt"})
            told = ask(terminal, model, "clean up", rm)
            assert "fluidbox" in told
            assert precious.read_text() == "keep me"

            # An allowed ls runs, with no question on the terminal: fluidbox allowed it.
            ls = ("toolu_ils_1", "Bash", {"command": "ls"})
            told = ask(terminal, model, "list the files", ls)
            assert "precious.txt" in told

            # An ASK: Claude Code waits in the hook while an approver decides in fluidbox
            # (nothing typed on this terminal could answer it); approved, the command runs.
            approver = InboxApprover(fluidbox_server.url, approver_key, "run_command")
            approver.start()
            command = "python3 -c \"open('approved.txt', 'w').close()\""
            ask(terminal, model, "make the file", ("toolu_iask_1", "Bash", {"command": command}))
            approver.join(60)
            assert approver.decided is not None, approver.error
            assert (claude.project / "approved.txt").exists()
        finally:
            terminal.close()

    calls = {c.tool_call_id: c for c in ToolCall.objects.filter(run_id=run_id)}
    assert (calls["toolu_irm_1"].decision, calls["toolu_irm_1"].source) == ("deny", "policy")
    assert calls["toolu_ils_1"].decision == "allow"
    assert calls["toolu_iask_1"].decision == "allow"
    assert Approval.objects.get(run_id=run_id, tool_call_id="toolu_iask_1").status == "approved"
    # One interactive session: both calls under Claude Code's session id.
    assert calls["toolu_irm_1"].session_id == calls["toolu_ils_1"].session_id != "mcp"
    connection.close()


def test_a_user_who_does_not_trust_the_folder_gets_no_session(tmp_path):
    with ScriptedModel() as model:
        claude = ClaudeCode(tmp_path, model, "fbr_unused")
        claude.setup("http://127.0.0.1:9", "run-unused")
        returning_user(claude)
        terminal = Terminal(
            [str(CLAUDE), "--model", "claude-sonnet-4-5"], cwd=claude.project, env=claude.env
        )
        try:
            terminal.wait_for("❯ No, exit")
            terminal.settle()
            terminal.type(ENTER)
            terminal.wait_exit()
            assert not model.requests
        finally:
            terminal.close()
