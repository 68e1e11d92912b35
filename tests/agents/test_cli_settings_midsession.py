"""Codex CLI (0.171.0) and Gemini CLI (0.61.0) do not apply a hook setting changed during a
session: Claude Code does, and asks fluidbox's hook first (`ConfigChange`,
test_claude_code_settings_reload.py); these two have no such event. Here a session's first
call is allowed, the harness then writes what a script the policy allowed could write —
every hook switched off, or fluidbox's entry taken away — and the same session's next call
is `rm precious.txt`. The CLI still runs fluidbox's hook for it, and the hook, seeing the
change, denies: the file stays, and the denial names what changed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from governance.models import ToolCall
from tests.agents.gemini_server import ScriptedGemini, function_call, function_responses, offered
from tests.agents.gemini_server import text as gemini_text
from tests.agents.responses_server import (
    ScriptedResponses,
    call_outputs,
    function_call_stream,
)
from tests.agents.responses_server import text_stream as responses_text
from tests.agents.scripted_http import Step, next_step
from tests.agents.test_claude_code_settings_reload import MODEL_TURN_SECONDS
from tests.agents.test_codex_cli import Codex, blocked, demo_run, output_text  # noqa: F401 (fixture)
from tests.agents.test_gemini_cli import gemini_run, result_text  # noqa: F401

pytestmark = pytest.mark.slow


class CodexSession(ScriptedResponses):
    def __init__(self, steps: list[Step]) -> None:
        super().__init__()
        self.steps, self.done = steps, set()

    def _next(self, body: dict) -> bytes:
        with self._lock:
            number = len(self.requests)
        answered = {str(item.get("call_id")) for item in call_outputs(body)}
        step = next_step(self.steps, self.done, answered.__contains__)
        return function_call_stream(number, *step) if step else responses_text(number, "done")


class GeminiSession(ScriptedGemini):
    def __init__(self, steps: list[Step]) -> None:
        super().__init__()
        self.steps, self.done = steps, set()

    def _next(self, body: dict) -> dict:
        if "run_shell_command" not in offered(body):
            return gemini_text("done")
        # The CLI may send a call's id back with a prefix of its own.
        ids = [str(response.get("id", "")) for response in function_responses(body)]
        step = next_step(self.steps, self.done, lambda call: any(i.endswith(call) for i in ids))
        return function_call(*step) if step else gemini_text("done")


def _after_a_model_turn(write: Callable[[], None]) -> Callable[[], None]:
    def step() -> None:
        write()
        time.sleep(MODEL_TURN_SECONDS)

    return step


def _codex_hooks_off(project: Path) -> None:
    config = project / ".codex" / "config.toml"
    assert "[features]" not in config.read_text()
    config.write_text(config.read_text() + "\n[features]\ncodex_hooks = false\n")


def _codex_entry_gone(project: Path) -> None:
    (project / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {}}))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (_codex_hooks_off, "features.codex_hooks = false turns every hook off"),
        (_codex_entry_gone, "hooks.PreToolUse no longer holds fluidbox's hook"),
    ],
    ids=["codex_hooks-false", "entry-removed"],
)
def test_codex_keeps_asking_the_hook_after_a_mid_session_change(
    fluidbox_server,
    demo_run,  # noqa: F811
    tmp_path,
    change,
    named,
):
    run_id, token = demo_run
    steps: list[Step] = [
        ("call_ls", "exec_command", {"cmd": "ls"}),
        _after_a_model_turn(lambda: change(codex.project)),
        ("call_rm", "exec_command", {"cmd": "rm precious.txt"}),
    ]
    with CodexSession(steps) as model:
        codex = Codex(tmp_path, model, token, run_id)
        codex.setup(fluidbox_server.url)
        (codex.project / "precious.txt").write_text("keep me")
        codex.ask_for("call_ls", "exec_command", {"cmd": "ls"})  # one session, both calls

        assert "precious.txt" in output_text(model, "call_ls")
        assert blocked(model, "call_rm")
        assert named in output_text(model, "call_rm")

    assert (codex.project / "precious.txt").read_text() == "keep me"
    # The hook's own denial has no ledger row; the allowed ls has one.
    assert list(ToolCall.objects.filter(run_id=run_id).values_list("decision", flat=True)) == [
        "allow"
    ]


def _gemini_hooks_off(project: Path) -> None:
    path = project / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooksConfig"] = {"enabled": False}
    path.write_text(json.dumps(settings))


def _gemini_entry_gone(project: Path) -> None:
    path = project / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    del settings["hooks"]["BeforeTool"]
    path.write_text(json.dumps(settings))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (_gemini_hooks_off, "hooksConfig.enabled is false, which turns every hook off"),
        (_gemini_entry_gone, "hooks.BeforeTool no longer holds fluidbox's hook"),
    ],
    ids=["hooksConfig-disabled", "entry-removed"],
)
def test_gemini_cli_keeps_asking_the_hook_after_a_mid_session_change(
    gemini_run,  # noqa: F811
    tmp_path,
    change,
    named,
):
    gemini, _, run_id = gemini_run
    project = gemini.project
    steps: list[Step] = [
        ("gem_ls", "run_shell_command", {"command": "ls"}),
        _after_a_model_turn(lambda: change(project)),
        ("gem_rm", "run_shell_command", {"command": "rm precious.txt"}),
    ]
    with GeminiSession(steps) as model:
        gemini.model = model
        gemini.env["GOOGLE_GEMINI_BASE_URL"] = model.url
        (project / "precious.txt").write_text("keep me")
        gemini.ask_for("gem_ls", "run_shell_command", {"command": "ls"})

        assert "precious.txt" in result_text(model, "gem_ls")
        denied = result_text(model, "gem_rm")

    assert (project / "precious.txt").read_text() == "keep me"
    assert "Tool execution blocked" in denied and named in denied
    assert list(ToolCall.objects.filter(run_id=run_id).values_list("decision", flat=True)) == [
        "allow"
    ]
