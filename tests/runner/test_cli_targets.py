"""How the hook reads where a CLI call lands: a Codex patch's files, a glob's reach, a path's
real place (runner/codex_patch.py, runner/cli_paths.py)."""

from __future__ import annotations

import pytest

from runner.cli_paths import UnresolvablePath, pattern_reaches, real_path
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
    expected = [reach.format(grandparent=base.parents[1])] if reach else []
    assert pattern_reaches(pattern, str(base), str(base)) == expected


def test_a_pattern_climbing_after_a_wildcard_is_refused(tmp_path):
    with pytest.raises(UnresolvablePath):
        pattern_reaches("*/../../x", str(tmp_path), str(tmp_path))


@pytest.mark.parametrize(
    "separator", ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
)
def test_a_header_is_one_line_where_codex_reads_one(separator):
    # Codex cuts a patch at "\n" alone; Python's splitlines() also at these. Read as two
    # lines, the header would name notes.md while Codex writes under /etc/cron.d.
    patch = (
        "*** Begin Patch\n"
        f"*** Add File: notes.md{separator}/../../../../../etc/cron.d/evil\n"
        "+* * * * * root id\n"
        "*** End Patch\n"
    )
    with pytest.raises(UnreadablePatch, match="control character"):
        patch_targets(patch)


def test_a_header_path_is_read_as_codex_reads_it():
    patch = (
        "*** Begin Patch\r\n"
        "*** Update File: a.py\r\n"
        "*** Move to:  spaced.py  \r\n"
        "@@\r\n-x\r\n+y\r\n"
        "*** Add File:  lead.py\r\n+z\r\n"
        "*** End Patch\r\n"
    )
    # "\r\n" ends a line; Codex takes the path after the marker and its one space, and the
    # "Move to" line untrimmed.
    assert patch_targets(patch) == ["a.py", " spaced.py  ", " lead.py"]


@pytest.mark.parametrize(
    ("pattern", "reaches"),
    [
        ("**/*.{ts,tsx}", []),
        ("{/etc/host*,zz}", ["/etc"]),
        ("{zz,{/etc,/usr}/*.conf}", ["/etc", "/usr"]),
        ("{..,zz}/{..,zz}/etc/host*", ["{grandparent}/etc", "{parent}/zz/etc", "{base}/etc"]),
    ],
)
def test_each_alternative_of_a_brace_pattern_is_asked_about(tmp_path, pattern, reaches):
    base = tmp_path.resolve()
    names = {"grandparent": base.parents[1], "parent": base.parent, "base": base}
    expected = [reach.format(**names) for reach in reaches]
    assert pattern_reaches(pattern, str(base), str(base)) == expected


@pytest.mark.parametrize(
    "pattern", ["{1..9}/../../x", "x{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}"]
)
def test_a_brace_pattern_whose_reach_cannot_be_told_is_refused(tmp_path, pattern):
    with pytest.raises(UnresolvablePath):
        pattern_reaches(pattern, str(tmp_path), str(tmp_path))
