"""Where an agent CLI's path argument really points, so the gate is asked about that place.

The hook runs on the CLI's machine, where the CLI's file tools follow symbolic links: a
project may hold `notes.md -> .git/hooks/pre-commit`. A path is resolved here with the
runner's own walk (`runner.confinement`, `realpath` semantics) over the whole file system.
A name that does not exist yet resolves through its deepest existing directory, and a
dangling link to its target, since writing through it creates the target.
"""

from __future__ import annotations

import os
import re

from runner.confinement import Workspace

_WHOLE_MACHINE = Workspace("/", virtual_root=None)
_GLOB_CHARACTER = re.compile(r"[*?\[\]{}]")


class UnresolvablePath(ValueError):
    """A path argument whose real place cannot be told; the call is denied."""


def real_path(path: str, cwd: str) -> str:
    """The absolute real path `path` names, relative ones taken from `cwd`."""
    absolute = os.path.join(cwd, os.path.expanduser(path))
    if not absolute.startswith("/"):
        raise UnresolvablePath(f"{path!r} is relative to a working directory that is not absolute")
    try:
        return str(_WHOLE_MACHINE.resolve(absolute))
    except (OSError, ValueError) as error:
        raise UnresolvablePath(f"cannot tell where {path!r} leads ({error})") from None


def pattern_reach(pattern: str, base: str, cwd: str) -> str | None:
    """The directory a glob pattern reaches when it leaves `base` (absolute, or with `..`);
    None when it stays below `base`.

    The reach is the pattern's static part, the directories before its first wildcard. A
    `..` after a wildcard could climb anywhere the wildcard matched, so it is refused.
    """
    parts = pattern.split("/")
    leaves = pattern.startswith("/") or ".." in parts
    if not leaves:
        return None
    wildcard_at = next(
        (index for index, part in enumerate(parts) if _GLOB_CHARACTER.search(part)), None
    )
    if wildcard_at is None:
        static = parts[:-1]  # the last part is the name matched
    else:
        if ".." in parts[wildcard_at:]:
            raise UnresolvablePath(f"the pattern {pattern!r} climbs with '..' after a wildcard")
        static = parts[:wildcard_at]
    prefix = "/".join(static) or ("/" if pattern.startswith("/") else ".")
    return real_path(os.path.join(base, prefix), cwd)
