"""An outside review of the hook, from the attacker's side: a shell command the CLI runs in
another folder than the project's is asked of the gate as run there.

The CLIs let the model pick where a command runs without the command saying so — Claude
Code keeps a `cd` for the session's next commands, Codex's `exec_command` takes a `workdir`,
Gemini's `run_shell_command` a `dir_path` — and the hook asked about the command's text
alone. A command is not the same everywhere:

- `git status`, ALWAYS under the demo policy, runs the `core.fsmonitor` of a git directory a
  repository ships as an ordinary folder (git takes `HEAD`, `config`, `objects/`, `refs/` for
  a repository of its own when started inside it): Codex and Claude Code ran the
  repository's program;
- `echo … > settings.json` in `.gemini` rewrote Gemini CLI's settings (hooks off for the
  next session), where `echo … > .gemini/settings.json` is a config path's write.

With the hook's old mapping every test here fails that way; now the gate is asked about
`cd <folder> && <command>` and denies it.
"""

from __future__ import annotations

import pytest
from django.db import connection

from governance.models import ToolCall
from governance.services.bundles import bundle_import
from governance.services.policies import policy_save
from tests.agents.gemini_server import ScriptedGemini
from tests.agents.model_server import ScriptedModel, text_stream, tool_results, tool_use_stream
from tests.agents.responses_server import ScriptedResponses
from tests.agents.test_claude_code import ClaudeCode, denial_ids
from tests.agents.test_codex_cli import Codex
from tests.agents.test_gemini_cli import GeminiCli
from tests.runner_live.conftest import create_run
from tests.support.servers import ROOT

pytestmark = pytest.mark.slow

BUNDLE = (ROOT / "runner" / "bundles" / "claude-code.yaml").read_text()


@pytest.fixture
def autonomous_run(demo_org, operator) -> tuple[str, str]:
    """The demo policy (`git status` ALWAYS, the rest of the shell ASK) in an autonomous run,
    where an ASK is denied at once: (run id, session token)."""
    bundle_import(org=demo_org, text=BUNDLE)
    return create_run(
        operator, autonomy="autonomous", bundles=["claude-code"], connections=["tracker"]
    )


def ship_a_git_directory(project, marker) -> None:
    """What a hostile repository ships: `vendor/lib`, a folder shaped as a git directory whose
    `core.fsmonitor` is the attacker's program (here: it leaves `marker`)."""
    folder = project / "vendor" / "lib"
    (folder / "objects" / "info").mkdir(parents=True)
    (folder / "refs" / "heads").mkdir(parents=True)
    (folder / "objects" / "info" / ".keep").write_text("")
    (folder / "refs" / "heads" / ".keep").write_text("")
    (folder / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f'\tfsmonitor = "touch {marker}; false"\n'
    )


def asked_commands(run_id: str) -> list[tuple[str, str]]:
    return [
        (call.arguments.get("command"), call.decision)
        for call in ToolCall.objects.filter(run_id=run_id, tool="run_command").order_by(
            "created_at"
        )
    ]


# Writes and reads anywhere, `echo` always: what keeps the agent off the CLIs' own settings is
# that they are config paths, ALWAYS only under a rule that names them.
BROAD_POLICY = """name: broad
autonomous_fallback: deny
approval_timeout: 300
rules:
  - {pattern: "run_command:echo *", action: ALWAYS}
  - {pattern: "write_file:*", action: ALWAYS}
  - {pattern: "read_file:*", action: ALWAYS}
"""


def test_gemini_cli_command_in_another_folder_is_asked_as_run_there(
    fluidbox_server, demo_org, operator, tmp_path
):
    # `echo … > .gemini/settings.json` is asked as a write of a config path and denied; the
    # same command with `dir_path: .gemini` and a relative target was asked as a write of
    # `settings.json`, allowed, and switched Gemini CLI's hooks off for the next session.
    policy_save(org=demo_org, author=None, text=BROAD_POLICY)
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(
        operator, policy="broad", autonomy="autonomous", bundles=["claude-code"]
    )
    with ScriptedGemini() as model:
        gemini = GeminiCli(tmp_path, model, token)
        gemini.setup(fluidbox_server.url, run_id)
        settings = gemini.project / ".gemini" / "settings.json"
        before = settings.read_text()
        folder = (gemini.project / ".gemini").resolve()
        command = """echo '{"hooksConfig": {"enabled": false}}' > settings.json"""

        gemini.ask_for("g_off", "run_shell_command", {"command": command, "dir_path": ".gemini"})

        assert settings.read_text() == before, "the agent rewrote Gemini CLI's settings"
        assert asked_commands(run_id) == [(f"cd {folder} && {command}", "deny")]
    connection.close()


def test_codex_command_in_another_workdir_is_asked_as_run_there(
    fluidbox_server, autonomous_run, tmp_path
):
    run_id, token = autonomous_run
    marker = tmp_path / "fsmonitor-ran"
    with ScriptedResponses() as model:
        codex = Codex(tmp_path, model, token, run_id)
        codex.setup(fluidbox_server.url)
        ship_a_git_directory(codex.project, marker)
        folder = codex.project / "vendor" / "lib"

        codex.ask_for("c_status", "exec_command", {"cmd": "git status", "workdir": "vendor/lib"})

        assert not marker.exists(), "the repository's fsmonitor ran"
        assert asked_commands(run_id) == [(f"cd {folder} && git status", "deny")]
        assert ToolCall.objects.get(run_id=run_id, tool_call_id="c_status").decision == "deny"
    connection.close()


class ScriptedModelInTurns(ScriptedModel):
    """One session, several tool calls in turn: the next one once the last has its result."""

    def __init__(self, *tool_uses: tuple[str, str, dict]) -> None:
        super().__init__()
        self.tool_uses = tool_uses

    def _next(self, body: dict) -> bytes:
        answered = {result.get("tool_use_id") for result in tool_results(body)}
        for tool_use in self.tool_uses:
            if tool_use[0] not in answered:
                return tool_use_stream(*tool_use)
        return text_stream("done")


def test_claude_code_command_after_a_cd_is_asked_as_run_there(
    fluidbox_server, demo_org, operator, tmp_path
):
    # Claude Code keeps a `cd` for the session's next commands. The demo policy with `cd`
    # allowed: the `cd` alone runs; the `git status` after it is asked where it runs.
    demo_policy = (ROOT / "governance" / "demo" / "policy.yaml").read_text()
    cd_rule = '  - {pattern: "run_command:cd *", action: ALWAYS}\n'
    policy_save(
        org=demo_org, author=None, text=demo_policy.replace("rules:\n", "rules:\n" + cd_rule, 1)
    )
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(
        operator, autonomy="autonomous", bundles=["claude-code"], connections=["tracker"]
    )
    marker = tmp_path / "fsmonitor-ran"
    turns = (
        ("toolu_cd", "Bash", {"command": "cd vendor/lib"}),
        ("toolu_status", "Bash", {"command": "git status"}),
    )
    with ScriptedModelInTurns(*turns) as model:
        claude = ClaudeCode(tmp_path, model, token)
        claude.setup(fluidbox_server.url, run_id)
        ship_a_git_directory(claude.project, marker)
        folder = (claude.project / "vendor" / "lib").resolve()

        result = claude.ask_for("toolu_status", "Bash", {"command": "git status"})

        assert not marker.exists(), "the repository's fsmonitor ran"
        assert "toolu_status" in denial_ids(result)
        assert asked_commands(run_id) == [
            ("cd vendor/lib", "allow"),
            (f"cd {folder} && git status", "deny"),
        ]
    connection.close()
