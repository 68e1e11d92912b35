"""The files a Codex `apply_patch` changes, read from its `*** … File:` headers.

The lines are cut where Codex's own parser cuts them (`codex-rs/apply-patch`, Rust's
`patch.trim().lines()`): at "\\n" alone, a "\\r" right before it dropped. Python's
`splitlines()` also breaks at "\\r", "\\x0b", "\\x1c"–"\\x1e", "\\x85", "\\u2028" and
"\\u2029", where Codex reads one line: `*** Add File: notes.md\\r/../../etc/cron.d/x` would
be asked about here as `notes.md` and written there under `/etc/cron.d`.
"""

from __future__ import annotations

import unicodedata

_TARGET_HEADERS = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")
# Control, format and line or paragraph separator characters: no file name a model means
# has them, and in a header line they are where two readings of the line part.
_UNREADABLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


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
