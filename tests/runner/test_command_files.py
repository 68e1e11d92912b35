"""The files a command the CLI starts by itself names, read as the shell runs them: each shape
here ran `tools/post.sh` under bash (a helper session, with files that only echo), and each
was missed by a first reading that split words at blanks alone. Held at setup, a change to
the file shows at the hook's next call; a write to it through the CLI's own tools is denied
(tests/agents/test_hook_started_commands.py)."""

from __future__ import annotations

import fnmatch
import json
import subprocess
from pathlib import Path

import pytest

from runner.cli_started_commands import (
    fingerprints,
    named_files,
    started_commands,
    unknown_started_commands,
)
from runner.setup_hazards import OUR_HOOK_MARK
from tests.support.waiting import wait_until


def _ours(command: str) -> bool:
    return OUR_HOOK_MARK in command


def _hook(project: Path, command: str, env: dict | None = None) -> None:
    hook = {"type": "command", "command": command}
    settings = {"hooks": {"PostToolUse": [{"hooks": [hook]}]}}
    if env is not None:  # a local server's environment instead
        settings = {}
        servers = {"mcpServers": {"s": {"command": "sh", "args": ["-c", command], "env": env}}}
        (project / ".mcp.json").write_text(json.dumps(servers))
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))


def _changed_after_setup(project: Path, command: str, changed: Path) -> list[str]:
    """With `command` as a hook at setup, then `changed` rewritten: what the hook would deny
    every call for."""
    _hook(project, command)
    known = fingerprints("claude-code", project)
    changed.write_text("echo changed\n")
    return unknown_started_commands("claude-code", project, known, _ours)


RUNS_POST_SH = [
    "sh tools/post.sh>/dev/null",
    'sh "$CLAUDE_PROJECT_DIR"/tools/post.sh>/dev/null 2>&1',
    "sh tools/post.sh;echo done",
    "sh tools/post.sh&",
    "sh tools/post.sh||true",
    "sh tools/post.sh|tee /dev/null",
    "(sh tools/post.sh)",
    "{ sh tools/post.sh; }",
    "if true; then sh tools/post.sh; fi",
    "sh <tools/post.sh",
    "bash<tools/post.sh",
    "sh tools/pos?.sh",
    "sh tools/[p]ost.sh",
    "for f in tools/*.sh; do sh $f; done",
    "sh ${CLAUDE_PROJECT_DIR:-.}/tools/post.sh",
    'sh "$(pwd)/tools/post.sh"',
    'sh "$PWD/tools/post.sh"',
    "cd tools && sh post.sh",
    "(cd tools && sh post.sh)",
    "cd tools && cd sub && sh ../post.sh",
    "echo start # a comment\nsh tools/post.sh",
    "X=1 sh ./tools//post.sh",
    "bash -lc 'sh tools/post.sh>/dev/null'",
    "bash tools/{post,lint}.sh",
    'sh "$(git rev-parse --show-toplevel)/tools/post.sh"',
    "sh `git rev-parse --show-toplevel`/tools/post.sh",
    "sh $(git rev-parse --show-toplevel)/tools/post.sh",
    "sh ~+/tools/post.sh",
    "cat tools/post.sh | sh",
    "grep -v '^#' tools/post.sh | bash -s",
    "echo tools/post.sh | xargs -n1 sh",
    # a program that prints a file's content, or runs others, is not one that only prints
    'sh -c "$(cat tools/post.sh)"',
    'eval "$(cat tools/post.sh)"',
    "cat tools/post.sh > y.sh; sh y.sh",
    'echo "sh tools/post.sh" > r.sh; sh r.sh',
    "cat tools/post.sh | (sh)",
    "cat tools/post.sh | timeout 10 sh",
    "cat tools/post.sh |& sh",
    "cat tools/post.sh |\nsh",
    "git -c alias.p='!sh tools/post.sh' p",
    # a `#` inside quotes, a line continuation
    'git commit -qm "#12 wip" 2>/dev/null; sh tools/post.sh',
    "echo start && \\\n sh tools/post.sh",
    "sh ${TOOLS:-./tools}/post.sh",  # a variable the CLI does not set: its default
]


@pytest.mark.parametrize("command", RUNS_POST_SH)
def test_a_file_the_shell_runs_is_held(folders, command):
    project, _, _ = folders
    (project / "tools" / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    post, marker = project / "tools" / "post.sh", project / "ran"
    post.write_text(f"echo post >> {marker}\n")
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(project)}
    subprocess.run(["bash", "-c", command], cwd=project, env=env, timeout=30)
    # `sh tools/post.sh&` may still run: its `>>` makes the file before echo writes the line
    wait_until(lambda: marker.exists() and marker.read_text().endswith("\n"), "the script ran")
    assert marker.read_text() == "post\n"  # what bash runs, with a file that only echoes

    found = _changed_after_setup(project, command, post)

    assert any(line.startswith(f"{post}: the file ") for line in found), found


def test_the_file_the_shell_runs_is_held_when_another_has_its_name(folders):
    """`cd tools && sh post.sh` runs tools/post.sh, even with a post.sh in the project."""
    project, _, _ = folders
    (project / "tools").mkdir()
    (project / "post.sh").write_text("echo root\n")
    (project / "tools" / "post.sh").write_text("echo post\n")

    (found,) = _changed_after_setup(project, "cd tools && sh post.sh", project / "tools/post.sh")

    assert found.startswith(f"{project / 'tools' / 'post.sh'}: the file post.sh")


def test_a_file_a_server_s_environment_names_is_held(folders):
    """`BASH_ENV` makes bash run the file first; `NODE_OPTIONS=--require ./x.js` loads it."""
    project, _, _ = folders
    (project / "env.sh").write_text("echo env\n")
    (project / "x.js").write_text("// x\n")
    _hook(project, "true", env={"BASH_ENV": "env.sh", "NODE_OPTIONS": "--require ./x.js"})
    known = fingerprints("claude-code", project)

    (project / "env.sh").write_text("echo changed\n")
    (project / "x.js").write_text("// changed\n")

    found = unknown_started_commands("claude-code", project, known, _ours)
    assert sorted(line.partition(":")[0] for line in found) == [
        str(project / "env.sh"),
        str(project / "x.js"),
    ]


def test_a_file_not_there_yet_is_named_for_the_writes_the_hook_refuses(folders):
    """A Write makes the file, and the folders on its way (`cd new && sh later.sh`)."""
    project, _, _ = folders
    _hook(
        project,
        "test -f .claude/hooks/later.sh && sh .claude/hooks/later.sh 2>/dev/null;"
        " cd new && sh later.sh",
    )
    commands = started_commands("claude-code", project)

    assert not list(named_files(commands, project))
    named = {file.path for file in named_files(commands, project, there_or_not=True)}
    assert project / ".claude" / "hooks" / "later.sh" in named
    assert project / "new" / "later.sh" in named


def test_where_the_session_has_moved_is_read_too(folders):
    """Claude Code runs its hooks in the session's folder, which follows a `cd` (2.1.328): a
    helper session's `cd sub`, then a Write of sub/tools/post.sh, had `sh tools/post.sh` run
    it."""
    project, _, _ = folders
    (project / "tools").mkdir()
    (project / "tools" / "post.sh").write_text("echo post\n")
    (project / "sub" / "tools").mkdir(parents=True)
    _hook(project, "sh tools/post.sh")
    known = fingerprints("claude-code", project)

    (project / "sub" / "tools" / "post.sh").write_text("echo planted\n")

    assert unknown_started_commands("claude-code", project, known, _ours) == []
    moved = unknown_started_commands("claude-code", project, known, _ours, project / "sub")
    assert [line.partition(":")[0] for line in moved] == [str(project / "sub/tools/post.sh")]


def test_a_glob_in_a_project_whose_folder_name_looks_like_one(folders):
    """`proj[1]` is a folder's name, not a character class: `tools/*.sh` is read inside it."""
    project, _, _ = folders
    project = project / "proj[1]"
    (project / "tools").mkdir(parents=True)
    (project / "tools" / "a.sh").write_text("echo a\n")
    hook = "for f in tools/*.sh; do sh $f; done"

    (found,) = _changed_after_setup(project, hook, project / "tools" / "a.sh")

    assert found.startswith(f"{project / 'tools' / 'a.sh'}: the file tools/*.sh that")
    commands = started_commands("claude-code", project)
    (glob,) = [f for f in named_files(commands, project, there_or_not=True) if f.pattern]
    assert fnmatch.fnmatchcase(str(project / "tools" / "b.sh"), str(glob.path))


NOT_A_FILE_IT_RUNS = [
    "sh tools/post.sh >> hook.log",  # written to, not run
    "sh tools/post.sh 2>hook.log",
    "node --version",  # a program found on PATH, a file of that name beside it
    "echo ok # hook.log",
    # what a formatter formats, a log records: data, not code
    "ruff format src/app.py && echo done | tee -a hook.log",
    "jq -r .tool_input.file_path | xargs ruff format src/app.py",
    "git diff | python3 tools/post.sh; ruff format src/app.py",  # python3 runs its script
    "mypy src/app.py && cd src && pyright app.py",  # checkers, as formatters
    "python3 tools/post.sh --root src app.py",  # a folder named is no folder it works in
]


@pytest.mark.parametrize("command", NOT_A_FILE_IT_RUNS)
def test_what_a_command_writes_or_finds_on_path_is_not_held(folders, command):
    """A log the hook appends to changes every time it runs: held, it would stop every
    call after the first."""
    project, _, _ = folders
    (project / "tools").mkdir()
    (project / "tools" / "post.sh").write_text("echo post\n")
    data = [project / name for name in ("hook.log", "node", "README.md", "src/app.py")]
    (project / "src").mkdir()
    for path in data:
        path.write_text("")
    _hook(project, command)
    known = fingerprints("claude-code", project)

    for path in data:
        path.write_text("changed\n")

    assert unknown_started_commands("claude-code", project, known, _ours) == []


def test_a_formatter_s_files_are_not_held_but_what_its_options_load_is(folders):
    """`prettier --plugin=./tools/p.js src/app.js`: the plugin is code prettier runs, the
    file it formats is the agent's to edit."""
    project, _, _ = folders
    for name in ("tools/p.js", "src/app.js", "tools/eslint.config.js"):
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text("// x\n")
    _hook(project, "prettier --plugin=./tools/p.js --write src/app.js")
    commands = started_commands("claude-code", project)
    _hook(project, "eslint -c tools/eslint.config.js src/app.js")
    commands += started_commands("claude-code", project)

    held = {file.path for file in named_files(commands, project)}

    assert held == {project / "tools" / "p.js", project / "tools" / "eslint.config.js"}
