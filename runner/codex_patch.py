"""The files a Codex `apply_patch` changes, read from its `*** … File:` headers."""

from __future__ import annotations

_TARGET_HEADERS = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")


class UnreadablePatch(ValueError):
    """A patch whose targets cannot be told; the call is denied."""


def patch_targets(patch: str) -> list[str]:
    """Every path the patch adds, updates, deletes or moves to, in order, once each."""
    targets: list[str] = []
    for line in patch.splitlines():
        header = line.strip()
        for prefix in _TARGET_HEADERS:
            if header.startswith(prefix):
                target = header[len(prefix) :].strip()
                if not target:
                    raise UnreadablePatch(f"the patch has a {prefix!r} header without a path")
                if target not in targets:
                    targets.append(target)
    if not targets:
        raise UnreadablePatch("the patch names no file it changes")
    return targets
