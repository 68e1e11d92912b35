"""Attacks from the model's side on the runner's second wall: every call below is one the gate
allowed (the fake gate allows all), so only the runner stands between the model and the host.

Each test plants what it needs with allowed calls, then tries to run a program of its choosing
or to reach the directory next to the workspace, and checks that nothing ran or leaked.
"""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from runner import DEFAULT_PROGRAMS, Executor, GatePermission, ToolRunner, Workspace
from tests.runner.test_tool_runner import DEPLOY

SECRET_REPOSITORY_TEXT = "repository-outside-the-workspace"


@pytest.fixture
def tool_runner(fake_gate, workspace: Workspace) -> ToolRunner:
    return ToolRunner(
        fake_gate.client(), workspace, Executor(workspace, timeout=60.0), total_wait=0.5
    )


@pytest.fixture
def call(tool_runner: ToolRunner) -> Callable[[str, dict[str, str]], object]:
    counter = iter(range(1_000_000))

    def call(tool: str, arguments: dict[str, str]):
        return tool_runner.run_tool("s-attack", f"c-{next(counter)}", tool, arguments)

    return call


def _command(call, command: str):
    return call("run_command", {"command": command})


def _refused(result) -> bool:
    return result.is_error and result.text.startswith("Refused:")


def test_git_options_that_run_a_program_are_refused_in_every_spelling(
    call, workspace: Workspace, outside: Path, outside_untouched
) -> None:
    marker = outside / "pwned"
    assert not call("write_file", {"path": "a.txt", "content": "hello\n"}).is_error
    assert not _command(call, "git init -q").is_error
    assert not _command(call, "git add a.txt").is_error
    attacks = (
        f"git grep -Otouch\\ {marker} hello",
        f"git grep -nO'touch {marker}' hello",
        f"git grep --open-files-in-pager='touch {marker}' hello",
        f"git grep --open='touch {marker}' hello",
        f"git fetch --upload-pa='touch {marker}' .",
        f"git clone --upload-pac='touch {marker}' . copy",
        f"git clone --config=core.sshCommand='touch {marker}' host:repo copy",
        f"git clone -qccore.sshCommand='touch {marker}' host:repo copy",
        f"git push --receive-p='touch {marker}' . HEAD",
    )
    for attack in attacks:
        assert _refused(_command(call, attack)), attack
    assert outside_untouched()


def test_a_git_configuration_the_workspace_can_write_is_never_read(
    call, workspace: Workspace, outside: Path, outside_untouched
) -> None:
    marker = outside / "pwned"
    config = (
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        f'[remote "o"]\n\turl = .\n\tuploadpack = touch {marker}\n'
    )
    # A bare repository is a plain directory: its config is writable with write_file.
    assert not _command(call, "git init -q --bare repo").is_error
    assert not call("write_file", {"path": "repo/config", "content": config}).is_error
    assert _command(call, "git -C repo fetch o").is_error
    assert _refused(_command(call, "git --git-dir=repo fetch o"))
    # Renamed to `.git` before one exists, or copied into one that does.
    assert _refused(_command(call, "mv repo .git"))
    assert not (workspace.root / ".git").exists()
    assert not _command(call, "git init -q").is_error
    assert not call("write_file", {"path": "config", "content": config}).is_error
    assert _refused(_command(call, "cp -t.git config"))
    assert _refused(_command(call, "cp -ft.git config"))
    # Or made the new repository's config by a template or a git directory elsewhere.
    assert not call("write_file", {"path": "tpl/config", "content": config}).is_error
    assert _refused(_command(call, "git init -q --template=tpl sub"))
    assert _refused(_command(call, "git init -q --separate-git-dir=gitdir sub"))
    assert _command(call, "git fetch o").is_error  # `.git/config` is still git's own
    assert "uploadpack" not in (workspace.root / ".git" / "config").read_text()
    assert outside_untouched()


def test_git_cannot_clone_a_repository_from_outside_the_workspace(
    call, workspace: Workspace, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    subprocess.run(["git", "init", "-q", str(elsewhere)], check=True)
    (elsewhere / "kept.txt").write_text(SECRET_REPOSITORY_TEXT)
    subprocess.run(["git", "-C", str(elsewhere), "add", "kept.txt"], check=True)
    subprocess.run(
        ["git", "-C", str(elsewhere), "-c", "user.name=a", "-c", "user.email=a@b"]
        + ["commit", "-qm", "x"],
        check=True,
    )
    for attack in (
        f"git clone -q file://{elsewhere} stolen",
        f"git clone -q FILE://{elsewhere} stolen",
        f"git clone -q --reference=file://{elsewhere} https://example.invalid/r stolen",
    ):
        assert _refused(_command(call, attack)), attack
    assert not _command(call, "git init -q").is_error
    assert _refused(_command(call, f"git remote add o file://{elsewhere}"))
    assert not (workspace.root / "stolen" / "kept.txt").exists()
    listing = _command(call, "grep -r repository-outside .")
    assert SECRET_REPOSITORY_TEXT not in listing.text


def test_a_path_hidden_in_a_short_option_cluster_is_checked(
    call, workspace: Workspace, outside: Path, outside_untouched
) -> None:
    assert not call("write_file", {"path": "notes.txt", "content": "b\na\n"}).is_error
    for attack in (
        f"cp -at{outside} notes.txt",
        f"sort -uo{outside}/sorted notes.txt",
        f"cp -ft{outside}/ notes.txt",
    ):
        assert _refused(_command(call, attack)), attack
    assert outside_untouched()
    # The workspace path as the model sees it still works in a cluster.
    assert not _command(call, "sort -uo/workspace/sorted notes.txt").is_error
    assert (workspace.root / "sorted").read_text() == "a\nb\n"


def test_a_symbolic_link_cannot_be_planted_to_lead_out_later(
    call, workspace: Workspace, outside: Path
) -> None:
    # `s` -> a/b/c while that is a file, then a/b/c becomes a directory; `L` -> s/../../x is
    # inside while `s` is that link, and two levels above the workspace once `s` is a directory.
    for path in ("a/b/c", "a/sentinel.txt"):
        assert not call("write_file", {"path": path, "content": "decoy"}).is_error
    planted = [
        _command(call, "cp -s a/b/c s"),
        _command(call, "cp --symbolic-link a/b/c s"),
        _command(call, "cp -fs a/b/c s"),
        _command(call, "cp --sym a/b/c s"),
    ]
    assert all(_refused(result) for result in planted)
    assert not (workspace.root / "s").is_symlink()
    # The whole sequence, had a link been made, ends with a recursive read of it.
    for command in ("rm a/b/c", "mkdir a/b/c"):
        assert not _command(call, command).is_error
    assert _refused(_command(call, "cp -s s/../../outside/sentinel.txt L"))
    for command in ("rm -f s", "mkdir s"):
        assert not _command(call, command).is_error
    read = _command(call, "grep -R outside-the-workspace .")
    assert "must never be read" not in read.text
    assert not any(path.is_symlink() for path in workspace.root.rglob("*"))


def test_git_checks_out_no_symbolic_link(call, workspace: Workspace, outside: Path) -> None:
    # A commit (as fetched from anywhere) holding a link to outside the workspace.
    root = workspace.root
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "link").symlink_to(outside / "sentinel.txt")
    subprocess.run(["git", "-C", str(root), "add", "link"], check=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=a", "-c", "user.email=a@b"]
        + ["commit", "-qm", "x"],
        check=True,
    )
    (root / "link").unlink()

    assert not _command(call, "git checkout -- link").is_error

    assert (root / "link").exists()
    assert not (root / "link").is_symlink()
    read = _command(call, "grep -R outside-the-workspace .")
    assert "must never be read" not in read.text


def test_sort_cannot_pipe_its_input_through_another_program(
    call, workspace: Workspace, outside: Path, outside_untouched
) -> None:
    # sort spills to compressed temporary files when its buffer is small: each line of the
    # input is then a command for the "compressor" `sh`.
    script = "".join(f"touch {outside}/pwned{index % 3}\n" for index in range(20_000))
    assert not call("write_file", {"path": "big.txt", "content": script}).is_error
    for attack in (
        "sort -S 64K --compress-program=sh big.txt",
        "sort -S64K --compress-prog=sh -o out.txt big.txt",
        "sort --compress sh -S 64K big.txt",
    ):
        assert _refused(_command(call, attack)), attack
    assert outside_untouched()
    assert not _command(call, "sort -S 64K -o sorted.txt big.txt").is_error


def test_a_glob_does_not_name_what_is_outside_the_workspace(
    call, workspace: Workspace, outside: Path
) -> None:
    (outside / "hidden-name-0xbeef.key").write_text("k")
    workspace.root.joinpath("z_link").symlink_to(outside)  # a link the workspace came with
    for attack in (
        "ls ../*/*.key",
        f"ls {outside}/*.key",
        f"ls {outside}/hidden-name-0xbee[f].key",
        "ls z_*/*.key",
        "ls z_link/*.key",
    ):
        result = _command(call, attack)
        assert _refused(result), attack
        assert "0xbeef" not in result.text.replace(attack, ""), attack
    assert not call("write_file", {"path": "inside.key", "content": "k"}).is_error
    assert _command(call, "ls /workspace/*.key").text.endswith("inside.key")


LONG_SECRET = "ghp_Zq9XvB2mK7LpR4tY8wN1cH6jD3fS5gA0eU.eyJzdWIiOiJkZXBsb3kifQ.c2lnbmF0dXJl-x"


def test_a_long_secret_stays_masked_when_an_encoder_wraps_its_lines(
    fake_gate, workspace: Workspace
) -> None:
    deploy = DEPLOY
    executor = Executor(workspace, DEFAULT_PROGRAMS | {"printenv", "base64"}, timeout=60.0)
    runner = ToolRunner(fake_gate.client(), workspace, executor, tools=(deploy,), total_wait=0.5)
    fake_gate.secrets["deploy"] = {"DEPLOY_TOKEN": LONG_SECRET}
    workspace.root.joinpath("leak.txt").write_text(f"token={LONG_SECRET}\n")

    wrapped = runner.run_tool("s-1", "c-1", "deploy", {"command": "base64 leak.txt"})
    narrow = runner.run_tool("s-1", "c-2", "deploy", {"command": "base64 -w 16 leak.txt"})

    for result in (wrapped, narrow):
        assert not result.is_error and "***" in result.text
        text = result.text.split("--- stdout ---\n", 1)[1]
        recovered = base64.b64decode(text.replace("\n", "").replace("***", "") + "===")
        assert LONG_SECRET.encode() not in recovered
        assert LONG_SECRET[:24].encode() not in recovered


def test_the_sdk_permission_asks_about_the_place_a_link_leads_to(
    fake_gate, workspace: Workspace, outside: Path
) -> None:
    # The project holds links; Claude Code's Read and Write follow them.
    (workspace.root / "notes.md").symlink_to(outside / "sentinel.txt")
    (workspace.root / "loop").symlink_to(workspace.root / "loop")
    permission = GatePermission(fake_gate.client(), session_id="sdk", total_wait=0.5)
    fake_gate.verdicts["read_file"] = "deny"  # what a rule for the outside path would say

    async def ask(tool: str, path: str, call_id: str):
        hook_input = {"tool_name": tool, "tool_input": {"file_path": path, "content": "x"}}
        return await permission.pre_tool_use(hook_input, call_id, None)

    asyncio.run(ask("Read", str(workspace.root / "notes.md"), "t1"))
    asyncio.run(ask("Write", str(workspace.root / "notes.md"), "t2"))
    looped = asyncio.run(ask("Write", str(workspace.root / "loop"), "t3"))

    asked = [
        request["body"]["arguments"]["path"] for request in fake_gate.requests_to("/permission")
    ]
    assert asked == [str(outside / "sentinel.txt")] * 2
    assert looped["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert os.path.realpath(workspace.root / "notes.md") == str(outside / "sentinel.txt")


def _ssh_recorder(directory: Path, marker: Path) -> str:
    """A search path whose `ssh` records that git started it (and is git's own elsewhere)."""
    directory.mkdir()
    ssh = directory / "ssh"
    ssh.write_text(f"#!/bin/sh\necho started > {marker}\nexit 1\n")
    ssh.chmod(0o755)
    git = subprocess.run(["which", "git"], capture_output=True, text=True, check=True).stdout
    (directory / "git").symlink_to(git.strip())
    return f"{directory}:/usr/bin:/bin"


@pytest.mark.parametrize("remote", ["host:repo", "ssh://host/repo", "[host]:repo"])
def test_git_starts_no_ssh_unless_the_executor_was_built_with_it(
    fake_gate, workspace: Workspace, tmp_path: Path, remote: str
) -> None:
    # ssh carries data off the machine: the executor runs it only when built with it, and
    # a `host:path` remote must not let git start it instead.
    marker = tmp_path / "ssh-started"
    path = _ssh_recorder(tmp_path / "bin", marker)
    executor = Executor(workspace, timeout=60.0, search_path=path)
    runner = ToolRunner(fake_gate.client(), workspace, executor, total_wait=0.5)

    result = runner.run_tool("s", "c-1", "run_command", {"command": f"git clone -q {remote} d"})

    assert result.is_error
    assert not marker.exists()
    trusting = Executor(
        workspace, timeout=60.0, search_path=path, exfiltration_programs=frozenset({"ssh"})
    )
    trusted = ToolRunner(fake_gate.client(), workspace, trusting, total_wait=0.5)
    trusted.run_tool("s", "c-2", "run_command", {"command": f"git clone -q {remote} e"})
    assert marker.exists()  # the same clone with ssh configured does reach ssh


def test_a_shipped_link_moved_shallower_is_never_followed_by_a_recursive_read(
    call, workspace: Workspace, outside: Path, outside_untouched
) -> None:
    # The project ships `a/b/link -> ../../outside/sentinel.txt`, which leads to the project's
    # own `outside/sentinel.txt`. Moved one level up, the same text leads out of the workspace.
    root = workspace.root
    (root / "outside").mkdir()
    (root / "outside" / "sentinel.txt").write_text("decoy\n")
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "link").symlink_to("../../outside/sentinel.txt")
    (root / "other").mkdir()
    (root / "other" / "link").write_text("a file of the same name, for diff\n")
    assert not _command(call, "mv a/b/link a/link").is_error
    assert os.readlink(root / "a" / "link") == "../../outside/sentinel.txt"

    for refused in (
        "grep -R must .",
        "grep -nR must a",
        "grep --dereference-recursive must .",
        "grep --dereference-rec must .",
        "find -L . -name link",
        "find -H a -name link",
        "find . -follow -name link",
        "ls -RL a",
        "ls --dereference a/link",
        "cp -rL a copy",
        "cp --dereference -r a copy",
    ):
        result = _command(call, refused)
        assert _refused(result), (refused, result.text)
        assert "must never be read" not in result.text

    # What walks without following links still works, and reads nothing outside.
    for command in ("grep -r must .", "grep -rn decoy .", "find . -name link", "ls -R a"):
        result = _command(call, command)
        assert "must never be read" not in result.text, command
    assert "decoy" in _command(call, "grep -rn decoy .").text
    # diff walks directories following links unless told not to: the executor tells it.
    result = _command(call, "diff -r a other")
    assert "must never be read" not in result.text
    assert "outside-the-workspace" not in result.text
    assert not (root / "copy").exists()
    assert outside_untouched()
