"""The files a Codex `apply_patch` changes, read from its `*** … File:` headers.

The lines are cut where Codex's own parser cuts them (`codex-rs/apply-patch`, Rust's
`patch.trim().lines()`): at "\\n" alone, a "\\r" right before it dropped. Python's
`splitlines()` also breaks at "\\r", "\\x0b", "\\x1c"–"\\x1e", "\\x85", "\\u2028" and
"\\u2029", where Codex reads one line: `*** Add File: notes.md\\r/../../etc/cron.d/x` would
be asked about here as `notes.md` and written there under `/etc/cron.d`.
"""

from __future__ import annotations

import os
import re
import shlex
import unicodedata
from dataclasses import dataclass

_TARGET_HEADERS = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")
# Control, format and line or paragraph separator characters: no file name a model means
# has them, and in a header line they are where two readings of the line part.
_UNREADABLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


_BEGIN = "*** Begin Patch"
_NAMES_THE_TOOL = re.compile(r"(?<![\w./-])(?:apply_patch|applypatch)(?![\w.-])")
# `cd <folder> && apply_patch <<'EOF'`: Codex applies the patch relative to that folder.
_LEADING_CD = re.compile(r"^\s*cd\s+((?:'[^']*'|\"[^\"]*\"|[^\s;&|])+)\s*&&")


@dataclass(frozen=True)
class ShellPatch:
    text: str
    folder: str


class UnreadablePatch(ValueError):
    """A patch whose targets cannot be told; the call is denied."""


def _codex_lines(patch: str) -> list[str]:
    return [line.removesuffix("\r") for line in patch.split("\n")]


def _target(line: str, prefix: str) -> str:
    if any(unicodedata.category(character) in _UNREADABLE_CATEGORIES for character in line):
        raise UnreadablePatch(f"the patch's {prefix!r} header holds a control character")
    if prefix == "*** Move to:" and line.startswith(f"{prefix} "):
        target = line[len(prefix) + 1 :]  # Codex reads this header's line untrimmed
    else:
        # The header's trimmed line after the prefix and one space, as Codex reads it.
        target = line.strip()[len(prefix) :].removeprefix(" ")
    if not target.strip():
        raise UnreadablePatch(f"the patch has a {prefix!r} header without a path")
    return target


def patch_targets(patch: str) -> list[str]:
    """Every path the patch adds, updates, deletes or moves to, in order, once each."""
    targets: list[str] = []
    for line in _codex_lines(patch):
        header = line.strip()
        for prefix in _TARGET_HEADERS:
            if header.startswith(prefix):
                target = _target(line, prefix)
                if target not in targets:
                    targets.append(target)
    if not targets:
        raise UnreadablePatch("the patch names no file it changes")
    return targets


def shell_patch(parts: list[str], folder: str) -> ShellPatch | None:
    """The patch a shell command hands to `apply_patch` (a here-document or an argument),
    which Codex applies itself rather than running; None for a command without one. Read
    wide: any part that names the tool and holds a patch counts, wherever it is."""
    if not any(_NAMES_THE_TOOL.search(part) for part in parts):
        return None
    for part in parts:
        if _BEGIN in part:
            return ShellPatch(part[part.index(_BEGIN) :], _patch_folder(part, folder))
    return None


def _patch_folder(script: str, folder: str) -> str:
    moved = _LEADING_CD.match(script)
    if not moved:
        return folder
    try:
        words = shlex.split(moved.group(1))
    except ValueError:
        raise UnreadablePatch("the command's `cd` before apply_patch cannot be read") from None
    if len(words) != 1:
        raise UnreadablePatch("the command's `cd` before apply_patch cannot be read")
    # Codex joins the word as it is: `cd ~` is a folder named `~` there, not the home.
    return os.path.join(folder, words[0])
