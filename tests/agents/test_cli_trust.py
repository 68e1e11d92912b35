"""`agent_setup --trust`: the trust step Codex CLI and Gemini CLI ask of their user, taken
in the user's own configuration for this project and fluidbox's hook only.

Codex is the real CLI (`codex app-server`, which writes its own config.toml); the end-to-end
tests (test_codex_cli.py, test_gemini_cli.py) run each CLI on what `--trust` wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from runner.cli_trust import CodexAppServer
from tests.agents.installed_clis import CODEX
from tests.support.servers import ROOT

URL = "http://127.0.0.1:8000"


def agent_setup(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(home), CODEX_HOME=str(home / ".codex"))
    env.pop("GEMINI_CLI_TRUSTED_FOLDERS_PATH", None)
    env.pop("GEMINI_CLI_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "runner.agent_setup", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def codex_hooks(home: Path, project: Path) -> dict[str, dict]:
    """The project's hooks as Codex lists them to this user, by command."""
    env = dict(os.environ, HOME=str(home), CODEX_HOME=str(home / ".codex"))
    with CodexAppServer(str(CODEX), env) as server:
        return {hook["command"]: hook for hook in server.project_hooks(project)}


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    return home


@pytest.fixture
def project(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    return project


needs_codex = pytest.mark.skipif(
    not CODEX.exists(), reason=f"Codex is not installed at {CODEX} (.ci/run installs it)"
)


@needs_codex
def test_codex_trust_is_the_projects_and_fluidboxs_hook_only(home, project):
    # The user's own configuration, and a hook the project already had: both kept as they
    # were; the other hook stays untrusted.
    user_config = home / ".codex" / "config.toml"
    user_config.write_text(
        'model = "gpt-5"\n\n[projects."/elsewhere"]\ntrust_level = "untrusted"\n\n'
        '[hooks.state."/elsewhere/.codex/hooks.json:stop:0:0"]\nenabled = false\n'
    )
    (project / ".codex").mkdir()
    # (Another hook before tools would be refused: runner/setup_hazards.py.)
    theirs = {"hooks": [{"type": "command", "command": "echo theirs"}]}
    (project / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [theirs]}}))

    done = agent_setup(
        home, "codex", "--url", URL, "--dir", str(project), "--trust", "--codex", str(CODEX)
    )
    assert done.returncode == 0, done.stderr
    assert f"the project {project.resolve()}" in done.stdout
    assert "/hooks -> Trust" not in done.stdout  # the manual step is not printed

    config = tomllib.loads(user_config.read_text())
    assert config["model"] == "gpt-5"
    assert config["projects"] == {
        "/elsewhere": {"trust_level": "untrusted"},
        str(project.resolve()): {"trust_level": "trusted"},
    }
    states = config["hooks"]["state"]
    assert states.pop("/elsewhere/.codex/hooks.json:stop:0:0") == {"enabled": False}
    [(key, state)] = states.items()
    hooks = codex_hooks(home, project)
    ours = next(
        hook for command, hook in hooks.items() if "runner.hook" in command and " codex " in command
    )
    assert (ours["key"], ours["trustStatus"]) == (key, "trusted")
    assert state == {"trusted_hash": ours["currentHash"]}
    assert hooks["echo theirs"]["trustStatus"] == "untrusted"

    # Again: nothing changes. With another URL the hook's command changes, and Codex would
    # skip it untrusted; --trust trusts the new command.
    before = user_config.read_text()
    assert (
        agent_setup(
            home, "codex", "--url", URL, "--dir", str(project), "--trust", "--codex", str(CODEX)
        ).returncode
        == 0
    )
    assert user_config.read_text() == before
    assert agent_setup(home, "codex", "--url", "http://127.0.0.1:9", "--dir", str(project))
    changed = codex_hooks(home, project)
    assert [h["trustStatus"] for c, h in changed.items() if "runner.hook" in c] == ["modified"]
    done = agent_setup(
        home, "codex", "--url", "http://127.0.0.1:9", "--dir", str(project), "--trust",
        "--codex", str(CODEX),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    trusted = codex_hooks(home, project)
    assert [h["trustStatus"] for c, h in trusted.items() if "runner.hook" in c] == ["trusted"]


def test_without_codex_the_files_are_written_and_the_steps_printed(home, project):
    done = agent_setup(
        home, "codex", "--url", URL, "--dir", str(project), "--trust", "--codex",
        str(project / "no-codex-here"),
    )  # fmt: skip
    assert done.returncode == 1
    assert "not trusted: no Codex CLI at" in done.stderr
    assert "/hooks -> Trust all and continue" in done.stdout
    assert (project / ".codex" / "hooks.json").exists()
    assert not (home / ".codex" / "config.toml").exists()


def test_gemini_trust_adds_this_folder_and_keeps_the_others(home, project):
    folders = home / ".gemini" / "trustedFolders.json"
    folders.parent.mkdir()
    folders.write_text(
        json.dumps({"/elsewhere": "TRUST_PARENT", str(project.resolve()): "DO_NOT_TRUST"})
    )
    done = agent_setup(home, "gemini-cli", "--url", URL, "--dir", str(project), "--trust")
    assert done.returncode == 0, done.stderr
    # An earlier "do not trust" for this very folder is overridden, and said so.
    assert f"the folder {project.resolve()} (TRUST_FOLDER) (was DO_NOT_TRUST)" in done.stdout
    assert json.loads(folders.read_text()) == {
        "/elsewhere": "TRUST_PARENT",
        str(project.resolve()): "TRUST_FOLDER",
    }
    assert "Never start it with --skip-trust" in done.stdout


def test_gemini_trust_leaves_a_file_it_cannot_read_alone(home, project):
    # Gemini CLI reads its trust file with comments allowed; rewriting one would drop them.
    folders = home / ".gemini" / "trustedFolders.json"
    folders.parent.mkdir()
    text = '{\n  // my machines\n  "/elsewhere": "TRUST_FOLDER"\n}\n'
    folders.write_text(text)
    done = agent_setup(home, "gemini-cli", "--url", URL, "--dir", str(project), "--trust")
    assert done.returncode == 1
    assert "not plain JSON" in done.stderr and "TRUST_FOLDER" in done.stderr
    assert folders.read_text() == text
    assert "trustedFolders.json" in done.stdout  # the manual step


def test_claude_code_has_no_trust_step_to_take(home, project):
    done = agent_setup(home, "claude-code", "--url", URL, "--dir", str(project), "--trust")
    assert done.returncode == 2
    assert "--trust: claude-code has no trust step to take" in done.stderr
    assert not (project / ".claude").exists()
