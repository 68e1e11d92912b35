"""Links the file system already holds, as the caller found them on the way of a command.

A shell command's paths are read as written: `printf x >> notes` writes `notes`, but when
`notes` is a symbolic link to `.git/config` the shell writes git's configuration. Only the
machine the command runs on can tell, so the caller that runs it (the agent CLIs' hook)
sends what it found: the folder the command starts in and, for each link met on the way of
a word of the command, where the link points (its target joined to the link's folder, as
the kernel reads it). A path the engine finds is then also judged where those links take
it. The argument can only add places to judge: a caller that leaves it out, or names links
that do not exist, gets the reading of the command alone, never a more lenient one.

    {"cwd": "/proj", "targets": {"/proj/notes": "/proj/.git/config"}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The argument a shell tool's call carries them in.
LINKS_ARGUMENT = "links_on_disk"
MOST_LINKS = 512
# As the kernel's ELOOP: more links than this on the way of one path and it is not followed.
MOST_HOPS = 40


class UnreadableLinks(ValueError):
    """The links argument is not what this module reads; the call is not decided on it."""


@dataclass(frozen=True)
class LinksOnDisk:
    cwd: str
    targets: Mapping[str, str]

    def through(self, path: str) -> str | None:
        """Where `path` leads through the links, or None when none is on its way."""
        absolute = path if path.startswith("/") else f"{self.cwd}/{path}"
        waiting = list(reversed(absolute.split("/")))
        current, hops = "", 0
        while waiting:
            part = waiting.pop()
            if part in ("", "."):
                continue
            if part == "..":  # from the real folder reached so far, as the kernel goes up
                current = current.rpartition("/")[0]
                continue
            candidate = f"{current}/{part}"
            target = self.targets.get(candidate)
            if target is None:
                current = candidate
                continue
            hops += 1
            if hops > MOST_HOPS:
                raise UnreadableLinks(f"more than {MOST_HOPS} links on the way of {path!r}")
            waiting.extend(reversed(target.split("/")))
            current = ""
        return (current or "/") if hops else None


def read_links_on_disk(value: Any) -> LinksOnDisk | None:
    """The links a call reports, or None without any; raises UnreadableLinks."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) != {"cwd", "targets"}:
        raise UnreadableLinks(f"{LINKS_ARGUMENT} must be an object of cwd and targets")
    cwd, targets = value["cwd"], value["targets"]
    if not _is_absolute(cwd):
        raise UnreadableLinks(f"{LINKS_ARGUMENT}.cwd must be an absolute path")
    if not isinstance(targets, Mapping) or len(targets) > MOST_LINKS:
        raise UnreadableLinks(
            f"{LINKS_ARGUMENT}.targets must be an object of at most {MOST_LINKS} links"
        )
    for link, target in targets.items():
        if not _is_absolute(link) or not _is_absolute(target):
            raise UnreadableLinks(f"{LINKS_ARGUMENT}.targets: links and targets are absolute paths")
    return LinksOnDisk(cwd, dict(targets))


def _is_absolute(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("/") and "\x00" not in value
