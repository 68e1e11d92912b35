"""The real Claude Code CLI applies a settings file changed during a session, about a second
later (2.1.328): a helper session had a script the policy allowed write `disableAllHooks`
into `.claude/settings.local.json`, and the same session's next `rm precious.txt` ran with no
hook and no record. agent_setup now has fluidbox's hook answer `ConfigChange` as well, and it
refuses such a change: the hook stays, and the next calls are denied, naming the setting.
"""

from __future__ import annotations

import json
import time

import pytest

from governance.models import ToolCall
from tests.agents.model_server import ScriptedModel, text_stream, tool_results, tool_use_stream
from tests.agents.scripted_http import Step, next_step
from tests.agents.test_claude_code import CLAUDE, ClaudeCode, claude_code_run, result_text

pytestmark = pytest.mark.slow

# The CLI applies a change about a second after the write (a helper session measured
# 0.8–1 s); a model's turn takes longer than that. Stands in for it.
MODEL_TURN_SECONDS = 4


class ScriptedSession(ScriptedModel):
    """Several tool calls in one session, with harness steps between them."""

    def __init__(self, steps: list[Step]) -> None:
        super().__init__()
        self.steps = steps
        self.done_actions: set[int] = set()

    def _next(self, body: dict) -> bytes:
        answered = {result.get("tool_use_id") for result in tool_results(body)}
        step = next_step(self.steps, self.done_actions, answered.__contains__)
        return tool_use_stream(*step) if step else text_stream("done")


def test_a_settings_change_that_switches_the_hook_off_is_not_applied(
    fluidbox_server, demo_org, operator, tmp_path
):
    assert CLAUDE.exists()
    run_id, token = claude_code_run(demo_org, operator, "")

    def switch_hooks_off() -> None:
        local = cli.project / ".claude" / "settings.local.json"
        # with its own permission for `rm`: Claude Code would then ask no one
        switched_off = {"disableAllHooks": True, "permissions": {"allow": ["Bash(rm:*)"]}}
        local.write_text(json.dumps(switched_off))
        time.sleep(MODEL_TURN_SECONDS)

    steps: list[Step] = [
        ("toolu_ls", "Bash", {"command": "ls"}),
        switch_hooks_off,
        ("toolu_rm", "Bash", {"command": "rm precious.txt"}),
    ]
    with ScriptedSession(steps) as model:
        cli = ClaudeCode(tmp_path, model, token)
        cli.setup(fluidbox_server.url, run_id)
        (cli.project / "precious.txt").write_text("keep me")
        cli.ask_for("toolu_ls", "Bash", {"command": "ls"})

        assert "precious.txt" in result_text(model, "toolu_ls")
        denied = result_text(model, "toolu_rm")

    assert (cli.project / "precious.txt").read_text() == "keep me"
    assert "disableAllHooks turns every hook off" in denied
    assert list(ToolCall.objects.filter(run_id=run_id).values_list("tool_call_id", "decision")) == [
        ("toolu_ls", "allow")
    ]
