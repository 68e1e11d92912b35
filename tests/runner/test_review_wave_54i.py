"""Review wave 54i: the sandbox-side runner attacked from the model's side.

Every call is one the (fake) gate allowed, so only the runner stands between the model and the
host. Each test shows the model reaching what it was not given: a file outside the workspace,
whether a name exists outside it, a secret the runner already knows, or an unbounded answer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from runner import DEFAULT_PROGRAMS, SANDBOX_BASIC, Executor, ToolRunner, Workspace
from tests.runner.conftest import SENTINEL
from tests.runner.test_tool_runner import DEPLOY

CANARY = "canary-54i-0d6f2b9e-deploy-key"


@pytest.fixture
def tool_runner(fake_gate, workspace: Workspace) -> ToolRunner:
    executor = Executor(workspace, DEFAULT_PROGRAMS, timeout=60.0)
    return ToolRunner(
        fake_gate.client(), workspace, executor, tools=(*SANDBOX_BASIC, DEPLOY), total_wait=0.5
    )


@pytest.fixture
def call(tool_runner: ToolRunner) -> Callable[..., object]:
    counter = iter(range(1_000_000))

    def call(tool: str, arguments: dict[str, str]):
        return tool_runner.run_tool("s-54i", f"c-{next(counter)}", tool, arguments)

    return call


def _refused(result) -> bool:
    return result.is_error and result.text.startswith("Refused:")


@pytest.mark.parametrize(
    "command",
    [
        "sort --files0-from=names",
        "sort --files0-from names",
        "sort --files0=names",  # getopt_long takes any unambiguous abbreviation
        "wc --files0-from=names",
        "wc --files0 names",
        "find -files0-from names",
        "find -files0-from names -type f",
    ],
)
def test_a_file_of_file_names_cannot_lead_a_program_out_of_the_workspace(
    call, outside: Path, command: str
) -> None:
    # The model writes a file (inside) that holds the name of a file outside, then hands it to a
    # program that reads its operands from a file. The argument checks only see `names`, which
    # is inside; the program then opens (sort: prints; wc: measures; find: lists, and with
    # `-delete` would remove) the outside file.
    sentinel = outside / "sentinel.txt"
    written = call("write_file", {"path": "names", "content": f"{sentinel}\0"})
    assert not written.is_error
    result = call("run_command", {"command": command})
    assert SENTINEL not in result.text, command
    assert str(sentinel) not in result.text.replace(str(sentinel.parent), ""), command
    assert "sentinel.txt" not in result.text, command
    assert _refused(result), result.text


def test_a_glob_does_not_tell_whether_a_name_exists_outside(
    call, workspace: Workspace, outside: Path
) -> None:
    # The workspace came with a link out (z_link -> outside). Naming it in a pattern (`z_lin[k]`)
    # lets the glob walk through it; the executor then refuses a pattern that matched something
    # outside, but runs one that matched nothing. The difference answers "does this name exist
    # outside?" — enough to enumerate a directory the model must not see, one guess at a time.
    (outside / "hidden-name-0xbeef.key").write_text("k")
    workspace.root.joinpath("z_link").symlink_to(outside)
    present = call("run_command", {"command": "ls z_lin[k]/hidden-name-0xbeef.ke[y]"})
    absent = call("run_command", {"command": "ls z_lin[k]/hidden-name-0xdead.ke[y]"})
    assert present.is_error and absent.is_error
    assert _refused(present) == _refused(absent), (present.text, absent.text)
    assert present.text.replace("beef", "dead") == absent.text


def test_a_known_secret_straddling_the_read_limit_is_not_shown_in_part(
    fake_gate, workspace: Workspace
) -> None:
    # A secrets tool ran earlier (the runner now knows its secret, and masks it "in everything
    # returned afterwards"). A file holding the secret is padded so that the read limit cuts
    # the secret: read_file masks only what it read, so the part before the limit is shown.
    runner = ToolRunner(
        fake_gate.client(),
        workspace,
        Executor(workspace, timeout=60.0),
        tools=(*SANDBOX_BASIC, DEPLOY),
        total_wait=0.5,
        max_read_bytes=1000,
    )
    fake_gate.secrets["deploy"] = {"DEPLOY_TOKEN": CANARY}
    assert not runner.run_tool("s", "c-0", "deploy", {"command": "pwd"}).is_error
    workspace.root.joinpath("padded.txt").write_text("." * 985 + CANARY + "\n")
    result = runner.run_tool("s", "c-1", "read_file", {"path": "padded.txt"})
    assert CANARY[:15] not in result.text, result.text[-80:]


def test_a_known_secret_straddling_the_output_limit_is_not_shown_in_part(
    fake_gate, workspace: Workspace
) -> None:
    # The same through run_command: the executor masks only the secrets of the call it runs and
    # cuts the output at its limit first; the runner's masker then sees only a prefix.
    runner = ToolRunner(
        fake_gate.client(),
        workspace,
        Executor(workspace, timeout=60.0, max_output=1000),
        tools=(*SANDBOX_BASIC, DEPLOY),
        total_wait=0.5,
    )
    fake_gate.secrets["deploy"] = {"DEPLOY_TOKEN": CANARY}
    assert not runner.run_tool("s", "c-0", "deploy", {"command": "pwd"}).is_error
    workspace.root.joinpath("padded.txt").write_text("." * 985 + CANARY + "\n")
    result = runner.run_tool("s", "c-1", "run_command", {"command": "cat padded.txt"})
    assert not result.is_error
    assert CANARY[:15] not in result.text, result.text[-80:]


def test_a_directory_listing_is_bounded_like_every_other_answer(
    fake_gate, workspace: Workspace
) -> None:
    # read_file stops at max_read_bytes and run_command at max_output; list_dir returns every
    # entry of a directory however many there are (a `cp -r d d2` doubles them per call).
    runner = ToolRunner(
        fake_gate.client(), workspace, Executor(workspace), total_wait=0.5, max_read_bytes=4096
    )
    crowded = workspace.root / "crowded"
    crowded.mkdir()
    for index in range(2000):
        (crowded / f"{index:05d}-{'x' * 100}").touch()
    result = runner.run_tool("s", "c-1", "list_dir", {"path": "crowded"})
    assert not result.is_error
    assert len(result.text.encode()) < 2 * 4096, len(result.text.encode())
    assert "truncated" in result.text
