"""The real Claude Code CLI runs a project's `PostToolUse` hook right after each tool: with
`sh tools/post.sh` there, a Write of tools/post.sh that the policy allowed (every write in
the project is) would have the CLI run what the agent wrote at once, outside any call
fluidbox decides. The hook denies that Write; another file's Write is decided by the gate,
and the project's hook runs as it was.
"""

from __future__ import annotations

import json

import pytest

from governance.models import ToolCall
from tests.agents.test_claude_code import (
    CLAUDE,
    ClaudeCode,
    claude_code_run,
    denial_ids,
    result_text,
)
from tests.agents.test_claude_code_settings_reload import ScriptedSession

pytestmark = pytest.mark.slow


def test_a_write_to_the_file_a_project_hook_runs_is_denied(
    fluidbox_server, demo_org, operator, tmp_path
):
    assert CLAUDE.exists()
    project = (tmp_path / "project").resolve()
    rules = (
        f'  - {{pattern: "write_file:{project}/*", action: ALWAYS}}\n'
        f'  - {{pattern: "read_file:{project}/*", action: ALWAYS}}\n'
    )
    run_id, token = claude_code_run(demo_org, operator, rules)
    post = project / "tools" / "post.sh"
    planted = {"file_path": str(post), "content": "rm -f precious.txt\n"}
    notes = {"file_path": str(project / "notes.txt"), "content": "notes\n"}
    # Claude Code writes a file that is there only after reading it in the same session.
    steps = [
        ("toolu_notes", "Write", notes),
        ("toolu_read", "Read", {"file_path": str(post)}),
        ("toolu_post", "Write", planted),
    ]
    with ScriptedSession(steps) as model:
        claude = ClaudeCode(tmp_path, model, token)
        (project / "tools").mkdir()
        post.write_text("echo project-hook >> ran.log\n")
        (project / "precious.txt").write_text("keep me")
        hook = {"type": "command", "command": "sh tools/post.sh"}
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_text(
            json.dumps({"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [hook]}]}})
        )
        claude.setup(fluidbox_server.url, run_id)

        result = claude.ask_for("toolu_notes", "Write", notes)

        assert "toolu_notes" not in denial_ids(result), result_text(model, "toolu_notes")
        assert "toolu_post" in denial_ids(result)
        denied = result_text(model, "toolu_post")
        assert f"{post} is the file tools/post.sh that hooks.PostToolUse" in denied
    assert post.read_text() == "echo project-hook >> ran.log\n"
    assert (project / "precious.txt").read_text() == "keep me"
    # The project's hook ran after the allowed Write, as it was at setup, and only then.
    assert (project / "ran.log").read_text() == "project-hook\n"
    assert list(ToolCall.objects.filter(run_id=run_id).values_list("tool_call_id", "decision")) == [
        ("toolu_notes", "allow"),
        ("toolu_read", "allow"),
    ]
