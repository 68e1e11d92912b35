"""Workspace confinement, from the attacker's side: no path reads or writes outside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runner import Workspace, WorkspaceEscape

SENTINEL = "outside-the-workspace: must never be read or changed"


def plant_escapes(workspace: Workspace, outside: Path) -> None:
    root = workspace.root
    (root / "docs").mkdir()
    (root / "docs" / "readme.txt").write_text("inside")
    os.symlink(outside, root / "link_out")  # a directory link pointing out
    os.symlink(outside / "sentinel.txt", root / "file_link_out")
    os.symlink("hop2", root / "hop1")  # a chain that leaves on its last hop
    os.symlink("docs/../hop3", root / "hop2")
    os.symlink(str(outside), root / "hop3")
    os.symlink("../outside/sentinel.txt", root / "relative_out")
    os.symlink(outside / "new.txt", root / "dangling_out")  # target does not exist yet


ESCAPES = [
    "../outside/sentinel.txt",
    "docs/../../outside/sentinel.txt",
    "./docs/./../../outside/sentinel.txt",
    "link_out/sentinel.txt",
    "file_link_out",
    "hop1/sentinel.txt",
    "relative_out",
    "dangling_out",
    "/workspace/../outside/sentinel.txt",
    "docs/\x00/../../outside/sentinel.txt",
]


@pytest.fixture
def planted(workspace: Workspace, outside: Path) -> Workspace:
    plant_escapes(workspace, outside)
    return workspace


@pytest.mark.parametrize("path", ESCAPES)
def test_no_escape_path_is_read(planted: Workspace, outside: Path, path: str) -> None:
    with pytest.raises(WorkspaceEscape):
        planted.open_read(path)


@pytest.mark.parametrize("path", ESCAPES)
def test_no_escape_path_is_written(planted: Workspace, outside_untouched, path: str) -> None:
    with pytest.raises(WorkspaceEscape):
        planted.write(path, "overwritten", create_parents=True)
    assert outside_untouched()


@pytest.mark.parametrize("path", ESCAPES)
def test_no_escape_path_resolves(planted: Workspace, path: str) -> None:
    with pytest.raises(WorkspaceEscape):
        planted.resolve(path)


def test_absolute_paths_outside_are_refused(planted: Workspace, outside: Path) -> None:
    for path in (str(outside / "sentinel.txt"), "/etc/passwd", "/", "/workspaces/x"):
        with pytest.raises(WorkspaceEscape, match="absolute path outside"):
            planted.open_read(path)


def test_listing_through_a_link_out_is_refused(planted: Workspace) -> None:
    for path in ("link_out", "hop1", ".."):
        with pytest.raises(WorkspaceEscape):
            planted.list_dir(path)


def test_nul_bytes_and_overlong_names_are_refused(planted: Workspace) -> None:
    with pytest.raises(WorkspaceEscape, match="NUL"):
        planted.open_read("docs/readme.txt\x00.png")
    with pytest.raises(WorkspaceEscape, match="longer than 255"):
        planted.write("a" * 256, "x")
    with pytest.raises(WorkspaceEscape, match="longer than 4096"):
        planted.write("/".join(["d"] * 3000), "x", create_parents=True)
    assert sorted(os.listdir(planted.root)) == sorted(
        [
            "docs",
            "link_out",
            "file_link_out",
            "hop1",
            "hop2",
            "hop3",
            "relative_out",
            "dangling_out",
        ]
    )


def test_a_symlink_loop_is_refused_not_followed_forever(workspace: Workspace) -> None:
    os.symlink("loop_b", workspace.root / "loop_a")
    os.symlink("loop_a", workspace.root / "loop_b")
    with pytest.raises(WorkspaceEscape, match="too many symbolic links"):
        workspace.open_read("loop_a")


def test_hard_links_are_refused_since_they_may_share_an_outside_file(
    workspace: Workspace, outside: Path, outside_untouched
) -> None:
    os.link(outside / "sentinel.txt", workspace.root / "hard")
    with pytest.raises(WorkspaceEscape, match="hard links"):
        workspace.open_read("hard")
    with pytest.raises(WorkspaceEscape, match="hard links"):
        workspace.write("hard", "overwritten")
    os.unlink(workspace.root / "hard")
    assert outside_untouched()


def test_fifos_are_not_opened(workspace: Workspace) -> None:
    os.mkfifo(workspace.root / "pipe")
    with pytest.raises(WorkspaceEscape, match="not a regular file"):
        workspace.open_read("pipe")  # would block forever on a naive open()


def test_paths_inside_work_including_links_that_stay_inside(workspace: Workspace) -> None:
    workspace.write("src/app/main.py", "print('hi')\n", create_parents=True)
    os.symlink("src/app", workspace.root / "app")
    os.symlink(workspace.root / "src" / "app" / "main.py", workspace.root / "absolute_inside")
    assert workspace.open_read("app/main.py") == b"print('hi')\n"
    assert workspace.open_read("absolute_inside") == b"print('hi')\n"
    assert workspace.open_read("/workspace/src/app/main.py") == b"print('hi')\n"
    assert workspace.open_read(workspace.root / "src" / "app" / "main.py") == b"print('hi')\n"
    assert workspace.resolve("app/../app/main.py") == workspace.root / "src" / "app" / "main.py"
    workspace.write("app/notes.txt", "via link")
    assert (workspace.root / "src" / "app" / "notes.txt").read_text() == "via link"
    assert [entry.name for entry in workspace.list_dir("app")] == ["main.py", "notes.txt"]
    assert {entry.name: entry.kind for entry in workspace.list_dir(".")} == {
        "absolute_inside": "symlink",
        "app": "symlink",
        "src": "directory",
    }


def test_writing_through_a_link_inside_to_a_new_file_lands_inside(workspace: Workspace) -> None:
    (workspace.root / "real").mkdir()
    os.symlink("real/target.txt", workspace.root / "pointer")
    workspace.write("pointer", "created through the link")
    assert (workspace.root / "real" / "target.txt").read_text() == "created through the link"


def test_the_git_directory_cannot_be_written(workspace: Workspace) -> None:
    (workspace.root / ".git").mkdir()
    os.symlink(".git", workspace.root / "innocent")
    for path in (".git/config", ".git/hooks/pre-commit", "innocent/config"):
        with pytest.raises(WorkspaceEscape, match="protected"):
            workspace.write(path, "[core]\n\tfsmonitor = curl evil", create_parents=True)
    assert list((workspace.root / ".git").iterdir()) == []


def test_a_directory_swapped_for_a_link_after_the_check_is_not_followed(
    workspace: Workspace, outside: Path
) -> None:
    (workspace.root / "docs").mkdir()
    (workspace.root / "docs" / "sentinel.txt").write_text("inside")
    assert workspace.resolve("docs/sentinel.txt") == workspace.root / "docs" / "sentinel.txt"
    # The attacker wins the race: between the check and the open, docs becomes a link out.
    (workspace.root / "docs").rename(workspace.root / "docs.old")
    os.symlink(outside, workspace.root / "docs")
    with pytest.raises(WorkspaceEscape):
        workspace.open_read("docs/sentinel.txt")


def test_a_swap_during_the_walk_cannot_redirect_the_open(
    workspace: Workspace, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap happens after the walk opened `docs` and before it opens the file in it."""
    (workspace.root / "docs").mkdir()
    (workspace.root / "docs" / "sentinel.txt").write_text("inside")
    swap_before_opening = _swap_docs_for_a_link_before_opening("sentinel.txt", workspace, outside)
    monkeypatch.setattr(os, "open", swap_before_opening)

    content = workspace.open_read("docs/sentinel.txt")

    assert swap_before_opening.swapped  # type: ignore[attr-defined]
    assert content == b"inside"  # read through the fd of the directory the walk verified


def test_control_a_check_then_open_confinement_falls_to_the_same_swap(
    workspace: Workspace, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The naive `realpath` check (the seed's `confine()`) reads the sentinel under this race."""
    (workspace.root / "docs").mkdir()
    (workspace.root / "docs" / "sentinel.txt").write_text("inside")
    swap_before_opening = _swap_docs_for_a_link_before_opening("sentinel.txt", workspace, outside)
    monkeypatch.setattr(os, "open", swap_before_opening)

    checked = Path(os.path.realpath(workspace.root / "docs" / "sentinel.txt"))
    assert checked.is_relative_to(workspace.root)
    fd = os.open(str(workspace.root / "docs" / "sentinel.txt"), os.O_RDONLY)
    with os.fdopen(fd) as opened:
        assert opened.read() == SENTINEL


def _swap_docs_for_a_link_before_opening(name: str, workspace: Workspace, outside: Path):
    real_open = os.open

    def open_after_swap(path, flags, mode=0o777, *, dir_fd=None):
        if not swapping.swapped and os.fspath(path).endswith(name):
            (workspace.root / "docs").rename(workspace.root / "docs.old")
            os.symlink(outside, workspace.root / "docs")
            swapping.swapped = True
        return real_open(path, flags, mode, dir_fd=dir_fd)

    swapping = open_after_swap
    swapping.swapped = False  # type: ignore[attr-defined]
    return swapping
