"""How the hook reads where a CLI call lands: a Codex patch's files, a glob's reach, a path's
real place (runner/codex_patch.py, runner/cli_paths.py)."""

from __future__ import annotations

import pytest

from runner.cli_paths import UnresolvablePath, pattern_reach, real_path
from runner.codex_patch import UnreadablePatch, patch_targets


def test_every_header_of_a_patch_is_a_target_once():
    patch = (
        "*** Begin Patch\n"
        "*** Update File: a.py\n"
        "*** Move to: b.py\n"
        "@@\n-x\n+*** Add File: not-a-header.py\n"
        "  *** Delete File: c.py  \n"
        "*** Add File: a.py\n"
        "*** End Patch"
    )
    assert patch_targets(patch) == ["a.py", "b.py", "c.py"]


@pytest.mark.parametrize(
    "patch", ["", "*** Begin Patch\n*** End Patch", "*** Add File:   \n+x", "*** Add File a"]
)
def test_a_patch_that_names_no_file_is_refused(patch):
    with pytest.raises(UnreadablePatch):
        patch_targets(patch)


def test_a_link_is_followed_and_a_missing_name_kept(tmp_path):
    root = tmp_path.resolve()
    (root / "link").symlink_to(root / "target" / "deep")
    assert real_path("link/new.txt", str(root)) == str(root / "target" / "deep" / "new.txt")
    assert real_path("/../../etc/./passwd", "/") == "/etc/passwd"


def test_a_loop_of_links_is_refused(tmp_path):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(UnresolvablePath):
        real_path("a", str(tmp_path))


@pytest.mark.parametrize(
    ("pattern", "reach"),
    [
        ("**/*.py", None),
        ("src/*.py", None),
        ("/etc/*", "/etc"),
        ("/etc/passwd", "/etc"),
        ("../../*", "{grandparent}"),
        ("../missing/../../*.txt", "{grandparent}"),
    ],
)
def test_a_pattern_leaving_its_directory_reaches_its_static_part(tmp_path, pattern, reach):
    base = tmp_path.resolve()
    expected = reach and reach.format(grandparent=base.parents[1])
    assert pattern_reach(pattern, str(base), str(base)) == expected


def test_a_pattern_climbing_after_a_wildcard_is_refused(tmp_path):
    with pytest.raises(UnresolvablePath):
        pattern_reach("*/../../x", str(tmp_path), str(tmp_path))
