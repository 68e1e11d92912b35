"""Where an agent CLI's path argument really points, so the gate is asked about that place.

The hook runs on the CLI's machine, where the CLI's file tools follow symbolic links: a
project may hold `notes.md -> .git/hooks/pre-commit`. A path is resolved here with the
runner's own walk (`runner.confinement`, `realpath` semantics) over the whole file system.
A name that does not exist yet resolves through its deepest existing directory, and a
dangling link to its target, since writing through it creates the target.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex

from runner.confinement import Workspace

_WHOLE_MACHINE = Workspace("/", virtual_root=None)
_GLOB_CHARACTER = re.compile(r"[*?\[\]{}]")


class UnresolvablePath(ValueError):
    """A path argument whose real place cannot be told; the call is denied."""


def real_path(path: str, cwd: str, *, home: bool = True) -> str:
    """The absolute real path `path` names, relative ones taken from `cwd`. The CLIs fold
    `..` as text before the file system sees the path (node's `path.resolve`, Codex's
    `absolutize`): `b/../../x` with `b` a link to `d1/d2` is `../x`, not `d1/x` (F144).

    `~` is read as the CLIs read it, not as a shell does: with `home`, `~` and `~/…` are
    the home folder (Claude Code's `expandPath`) and `~root/x` is a folder of `cwd`;
    without, no `~` is expanded (Gemini CLI's file tools: `path.resolve(dir, path)`)."""
    if home and (path == "~" or path.startswith("~/")):
        path = os.path.expanduser(path)
    absolute = os.path.join(cwd, path)
    if absolute.startswith("/"):
        absolute = os.path.normpath(absolute)
    if not absolute.startswith("/"):
        raise UnresolvablePath(f"{path!r} is relative to a working directory that is not absolute")
    try:
        return str(_WHOLE_MACHINE.resolve(absolute))
    except (OSError, ValueError) as error:
        raise UnresolvablePath(f"cannot tell where {path!r} leads ({error})") from None


# More alternatives than this and the pattern's reach is not worked out: it is refused.
_MOST_ALTERNATIVES = 256


def _alternatives(pattern: str) -> list[str]:
    """The patterns a `{a,b}` alternation stands for, nested ones too, as the CLIs' glob
    libraries (minimatch, ripgrep) expand them: `{/etc/host*,x}` reaches `/etc` like
    `/etc/host*` does. A group without a comma stays as it is (its inside still expanded); a
    `{a..z}` sequence is refused, since its reach cannot be told from its text."""
    start = pattern.find("{")
    if start < 0:
        return [pattern]
    depth, commas, close = 0, [], None
    for index in range(start, len(pattern)):
        character = pattern[index]
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
            if depth == 0:
                close = index
                break
        elif character == "," and depth == 1:
            commas.append(index)
    if close is None:
        return [pattern]
    head, body, tail = pattern[:start], pattern[start + 1 : close], pattern[close + 1 :]
    if commas:
        cuts = [start, *commas, close]
        expanded = (
            head + rest
            for left, right in itertools.pairwise(cuts)
            for rest in _alternatives(pattern[left + 1 : right] + tail)
        )
    elif ".." in body:
        raise UnresolvablePath("holds a brace sequence")
    else:
        expanded = (
            f"{head}{{{inner}}}{rest}"
            for inner in _alternatives(body)
            for rest in _alternatives(tail)
        )
    alternatives = list(itertools.islice(expanded, _MOST_ALTERNATIVES + 1))
    if len(alternatives) > _MOST_ALTERNATIVES:
        raise UnresolvablePath(f"has more than {_MOST_ALTERNATIVES} alternatives")
    return alternatives


def pattern_reaches(pattern: str, base: str, cwd: str) -> list[str]:
    """The directories a glob pattern reaches outside `base`, one per alternative of its
    braces that leaves it (absolute, or with `..`); none when it stays below `base`."""
    try:
        alternatives = _alternatives(pattern)
    except UnresolvablePath as error:
        raise UnresolvablePath(f"the pattern {pattern!r} {error}") from None
    reaches: list[str] = []
    for alternative in alternatives:
        reach = _pattern_reach(alternative, base, cwd)
        if reach is not None and reach not in reaches:
            reaches.append(reach)
    return reaches


def _plain(part: str) -> str:
    r"""A pattern's name with its escapes and one-character classes read as the characters
    they match (`\.\.` and `[.][.]` are `..`)."""
    return re.sub(r"\[(.)\]|\\(.)", lambda m: m.group(1) or m.group(2), part)


def _pattern_reach(pattern: str, base: str, cwd: str) -> str | None:
    """The directory a glob pattern reaches when it leaves `base` (absolute, or with `..`);
    None when it stays below `base`.

    The reach is the pattern's static part, the directories before its first wildcard. A
    `..` after a wildcard could climb anywhere the wildcard matched, so it is refused.
    """
    # `\.\.` and `[.][.]` are `..` to the glob libraries (minimatch) as well
    parts = [".." if _plain(part) == ".." else part for part in pattern.split("/")]
    pattern = "/".join(parts)
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


# Bounds on the search for links in one command: words looked at, folders it may start from
# (its own and each `cd`'s), links reported (the gate reads at most 512).
_MOST_WORDS = 1024
_MOST_STARTS = 8
_MOST_LINKS = 512
_MOST_HOPS = 40


def links_on_the_way(command: str, cwd: str) -> dict[str, str]:
    """The symbolic links met on the way of the command's words, each with where it points.

    The gate reads a shell command's paths as written; this tells it where the file system
    takes them (`notes -> .git/config`). Every word is tried as a path (and the part of an
    option after `=`, or after a short option's letter), from `cwd` and from each folder a
    `cd` names, walking it one component at a time as the kernel does: a link's target is
    joined to the link's folder, unresolved, so the gate can follow it the same way. Missing
    a word makes no call more lenient than the command alone; what is found only adds to it.
    """
    words = _words(command)[:_MOST_WORDS]
    starts = [cwd]
    for before, word in itertools.pairwise(words):
        if before in ("cd", "pushd") and not word.startswith("-") and len(starts) < _MOST_STARTS:
            starts.append(os.path.join(cwd, os.path.expanduser(word)))
    found: dict[str, str] = {}
    for word in words:
        for candidate in _path_candidates(word):
            for start in starts:
                _walk(os.path.join(start, os.path.expanduser(candidate)), found)
    return found


def _words(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(itertools.islice(lexer, _MOST_WORDS))
    except ValueError:  # an open quote: the words as whitespace separates them
        return command.split()[:_MOST_WORDS]


def _path_candidates(word: str) -> list[str]:
    candidates = [word]
    if "=" in word:
        candidates.append(word.split("=", 1)[1])
    if word.startswith("-") and not word.startswith("--") and len(word) > 2:
        candidates.append(word[2:])
    return [candidate for candidate in candidates if candidate]


def _walk(path: str, found: dict[str, str]) -> None:
    """Record each link on the way of `path`, following them, until a component is missing."""
    waiting = list(reversed(path.split("/")))
    current, hops = "/", 0
    while waiting and len(found) < _MOST_LINKS:
        part = waiting.pop()
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        try:
            target = os.readlink(candidate)
        except OSError:  # not a link (or not there)
            if not os.path.lexists(candidate):
                return
            current = candidate
            continue
        hops += 1
        if hops > _MOST_HOPS:
            return
        pointed = os.path.join(current, target)  # an absolute target replaces the folder
        found[candidate] = pointed
        waiting.extend(reversed(pointed.split("/")))
        current = "/"
