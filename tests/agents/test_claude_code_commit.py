"""The real Claude Code CLI commits the way it does, with its message in a here-document.

`git commit -m "$(cat <<'EOF' … EOF)"` is Claude Code's own shape for a commit: the gate reads
it exactly (the here-document's `cat`, then the commit with the message as its argument), so
rules for `git commit *` and `cat` allow it with no approver, and the commit holds the message
the model wrote. A here-document fed to a shell is read as that shell's script.
"""

from __future__ import annotations

import subprocess

import pytest
from django.db import connection

from governance.models import Approval, ToolCall
from tests.agents.model_server import ScriptedModel
from tests.agents.test_claude_code import ClaudeCode, claude_code_run, denial_ids, result_text

pytestmark = pytest.mark.slow

MESSAGE = "Add the notes (the first ones)\n\nCo-Authored-By: Claude <noreply@anthropic.com>"


def _git(project, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, check=True)
    return done.stdout


def test_claude_code_s_heredoc_commit_is_allowed_by_rules_and_commits_its_message(
    fluidbox_server, demo_org, operator, tmp_path
):
    project = (tmp_path / "project").resolve()
    rules = (
        '  - {pattern: "run_command:git add *", action: ALWAYS}\n'
        '  - {pattern: "run_command:git commit *", action: ALWAYS}\n'
        '  - {pattern: "run_command:cat", action: ALWAYS}\n'
        f'  - {{pattern: "write_file:{project}/*", action: ALWAYS}}\n'
    )
    run_id, token = claude_code_run(demo_org, operator, rules)
    with ScriptedModel() as model:
        claude = ClaudeCode(tmp_path, model, token)
        claude.setup(fluidbox_server.url, run_id)
        _git(project, "init", "-q")
        _git(project, "config", "user.email", "agent@example.com")
        _git(project, "config", "user.name", "Agent")
        (project / "notes.txt").write_text("first\n")
        precious = project / "precious.txt"
        precious.write_text("keep me")

        commit = f"git add notes.txt && git commit -q -m \"$(cat <<'EOF'\n{MESSAGE}\nEOF\n)\""
        result = claude.ask_for("toolu_commit_1", "Bash", {"command": commit})
        assert "toolu_commit_1" not in denial_ids(result), result_text(model, "toolu_commit_1")
        assert _git(project, "log", "-1", "--format=%B").strip() == MESSAGE

        # The same shape with the body fed to a shell: the shell's script is read, its rm
        # meets the policy's NEVER, and the file stays.
        piped = "cat <<'EOF' | sh\nrm -rf precious.txt\nEOF"
        result = claude.ask_for("toolu_piped_1", "Bash", {"command": piped})
        assert "toolu_piped_1" in denial_ids(result)
        assert precious.read_text() == "keep me"

    calls = {c.tool_call_id: c for c in ToolCall.objects.filter(run_id=run_id)}
    assert (calls["toolu_commit_1"].decision, calls["toolu_commit_1"].source) == (
        "allow",
        "policy",
    )
    assert (calls["toolu_piped_1"].decision, calls["toolu_piped_1"].source) == ("deny", "policy")
    assert "'run_command:rm *'" in calls["toolu_piped_1"].reason
    assert not Approval.objects.filter(run_id=run_id).exists()
    connection.close()
