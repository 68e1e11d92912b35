"""Glob patterns with `fnmatchcase` semantics, compiled once, with a bounded worst case.

A pattern is split at its stars into fixed pieces (literal characters, `?`, `[...]`
classes: each matches exactly one character). Python 3.11's `fnmatch.translate`
already turns every interior `*fixed` into an atomic group `(?>.*?fixed)`, so a
regex never backtracks into an earlier piece; its cost is at most
`len(subject) * (longest piece after a star)` steps. When that product is within
`STEP_BUDGET` the regex runs (one C call, the fast path). Otherwise the pieces are
matched one by one, leftmost first (which is exact for fixed-length pieces): the
head and tail are anchored (cost = their length), a literal interior piece is found
with a literal regex search (the engine's KMP prefix scan, linear), and the scans
of successive pieces cover disjoint stretches of the subject, so the whole match is
linear. Only an interior piece with `?` or `[...]` is searched at a cost of
`len(subject) * len(piece)`; if that exceeds the budget the matcher refuses with
`MatchTooExpensive` and the caller fails closed. No pattern/subject pair can
therefore run longer than the budget allows (bench/policy_eval.py prints the
measured worst case).
"""

import re
import sys
from dataclasses import dataclass

MAX_PATTERN_BYTES = 1024
# About 5 ns per step on the slowest regex shapes measured (`*?b*` over 64 KiB):
# 100,000 steps keep one pattern/subject pair well under a millisecond.
STEP_BUDGET = 100_000
# Matching every continuation of a command's start (a glob, xargs' input) walks the
# pattern one character at a time in Python, about 0.5 µs a step: 20,000 steps for all the
# open starts of one call keep it within the engine's 20 ms ceiling.
OPEN_STEP_BUDGET = 20_000

_STAR = None


class GlobError(Exception):
    """A pattern that cannot be evaluated; evaluation fails closed."""


class PatternTooLong(GlobError):
    pass


class MatchTooExpensive(GlobError):
    pass


@dataclass(frozen=True, slots=True)
class Atom:
    """One character position of a pattern: `regex` matches it, `literal` if it is one character."""

    regex: str
    literal: str | None


def parse_atoms(pattern: str) -> list[Atom | None]:
    """The pattern as atoms (None = a star), with the exact regex `fnmatch.translate` emits."""
    atoms: list[Atom | None] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            if not atoms or atoms[-1] is not _STAR:
                atoms.append(_STAR)
        elif c == "?":
            atoms.append(Atom(".", None))
        elif c == "[":
            atom, i = _parse_class(pattern, i)
            atoms.append(atom)
        else:
            atoms.append(Atom(re.escape(c), c))
    return atoms


def _parse_class(pattern: str, i: int) -> tuple[Atom, int]:
    """Port of the `[...]` branch of CPython 3.11's `fnmatch.translate`; `i` is past the `[`."""
    n = len(pattern)
    j = i
    if j < n and pattern[j] == "!":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1
    while j < n and pattern[j] != "]":
        j += 1
    if j >= n:
        return Atom("\\[", "["), i
    content = pattern[i:j]
    if len(content) == 1 and content != "!":
        return Atom(re.escape(content), content), j + 1
    if "-" not in content:
        stuff = content.replace("\\", r"\\")
    else:
        chunks = []
        k = i + 2 if pattern[i] == "!" else i + 1
        while True:
            k = pattern.find("-", k, j)
            if k < 0:
                break
            chunks.append(pattern[i:k])
            i = k + 1
            k = k + 3
        chunk = pattern[i:j]
        if chunk:
            chunks.append(chunk)
        else:
            chunks[-1] += "-"
        for k in range(len(chunks) - 1, 0, -1):
            if chunks[k - 1][-1] > chunks[k][0]:
                chunks[k - 1] = chunks[k - 1][:-1] + chunks[k][1:]
                del chunks[k]
        stuff = "-".join(s.replace("\\", r"\\").replace("-", r"\-") for s in chunks)
    stuff = re.sub(r"([&~|])", r"\\\1", stuff)
    if not stuff:
        return Atom("(?!)", None), j + 1
    if stuff == "!":
        return Atom(".", None), j + 1
    if stuff[0] == "!":
        stuff = "^" + stuff[1:]
    elif stuff[0] in ("^", "["):
        stuff = "\\" + stuff
    return Atom(f"[{stuff}]", None), j + 1


def escape_pattern(literal: str) -> str:
    """A pattern that matches exactly `literal` under fnmatchcase (`*` → `[*]`, ...)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in literal)


def _split_at_stars(atoms: list[Atom | None]) -> list[list[Atom]]:
    pieces: list[list[Atom]] = [[]]
    for atom in atoms:
        if atom is _STAR:
            pieces.append([])
        else:
            pieces[-1].append(atom)
    return pieces


class _Piece:
    """A fixed-length run of atoms, matched anchored or searched for."""

    __slots__ = ("length", "literal", "regex")

    def __init__(self, atoms: list[Atom]):
        self.length = len(atoms)
        literals = [a.literal for a in atoms]
        self.literal = "".join(literals) if None not in literals else None
        self.regex = re.compile("".join(a.regex for a in atoms), re.DOTALL)


class CompiledGlob:
    """One pattern, ready to match: `matches(subject)` never re-parses it."""

    __slots__ = (
        "pattern",
        "literal_prefix",
        "exact",
        "prefix_only",
        "oversize",
        "regex_match",
        "regex_limit",
        "required",
        "_head",
        "_middle",
        "_tail",
        "_searched_cost",
        "_atoms",
        "_open_ended",
    )

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.oversize = len(pattern.encode("utf-8", "surrogatepass")) > MAX_PATTERN_BYTES
        if self.oversize:
            self.literal_prefix, self.exact, self.prefix_only = "", None, False
            self.regex_limit, self.regex_match, self.required = -1, None, ""
            return
        atoms = parse_atoms(pattern)
        self._atoms = atoms
        self._open_ended = bool(atoms) and atoms[-1] is _STAR
        prefix = []
        for atom in atoms:
            if atom is _STAR or atom.literal is None:
                break
            prefix.append(atom.literal)
        self.literal_prefix = "".join(prefix)
        has_star = _STAR in atoms
        self.exact = self.literal_prefix if len(prefix) == len(atoms) else None
        self.prefix_only = len(atoms) == len(prefix) + 1 and atoms[-1] is _STAR
        self.regex_match = re.compile(_regex_of(atoms)).match
        pieces = _split_at_stars(atoms)
        starred = [len(p) for p in pieces[1:]]
        regex_cost = max([1, *starred]) if has_star else 0
        # Longest subject the one-call regex may take within the step budget.
        self.regex_limit = STEP_BUDGET // regex_cost if regex_cost else sys.maxsize
        self._head = _Piece(pieces[0])
        self._tail = _Piece(pieces[-1]) if has_star else None
        self._middle = [_Piece(p) for p in pieces[1:-1]]
        self.required = _longest_literal_run(pieces[1:])
        self._searched_cost = max([0, *(p.length for p in self._middle if p.literal is None)])

    def matches(self, subject: str) -> bool:
        if self.oversize:
            raise PatternTooLong(f"pattern is longer than {MAX_PATTERN_BYTES} bytes")
        if self.exact is not None:
            return subject == self.exact
        if self.prefix_only:
            return subject.startswith(self.literal_prefix)
        if len(subject) <= self.regex_limit:
            return self.regex_match(subject) is not None
        return self._match_piecewise(subject)

    def could_continue(self, start: str, budget: list[int]) -> bool:
        """Whether some subject that is `start` followed by more characters matches.
        `budget` holds the steps left to the caller's whole evaluation; past it, raises."""
        if self.oversize:
            raise PatternTooLong(f"pattern is longer than {MAX_PATTERN_BYTES} bytes")
        prefix = self.literal_prefix
        if not (start.startswith(prefix) or prefix.startswith(start)):
            return False
        atoms, done = self._atoms, min(len(prefix), len(start))
        # The pattern as a set of positions in its atoms (a star stays where it is).
        states = _after_stars({done}, atoms)
        last = len(atoms) - 1
        budget[0] -= 1
        for char in start[done:]:
            if last in states and atoms[last] is _STAR:
                return True  # a final star: every continuation from here matches
            budget[0] -= len(states)
            if budget[0] < 0:
                raise MatchTooExpensive(
                    "matching every continuation of the command's start against the rules "
                    f"needs more than {OPEN_STEP_BUDGET} steps"
                )
            following = set()
            for i in states:
                if i < len(atoms):
                    atom = atoms[i]
                    if atom is _STAR:
                        following.add(i)
                    elif atom.literal == char or (
                        atom.literal is None and re.fullmatch(atom.regex, char, re.DOTALL)
                    ):
                        following.add(i + 1)
            if not following:
                return False
            states = _after_stars(following, atoms)
        return any(i < len(atoms) for i in states)

    def matches_every_continuation(self, start: str) -> bool:
        """Whether every subject that starts with `start` matches: a final star does the rest."""
        return self._open_ended and self.matches(start)

    def _match_piecewise(self, subject: str) -> bool:
        n = len(subject)
        if n * self._searched_cost > STEP_BUDGET:
            raise MatchTooExpensive(
                f"pattern {self.pattern[:60]!r} has a `?`/`[...]` piece between stars that is too "
                f"costly to search in a {n}-character subject"
            )
        head, tail = self._head, self._tail
        if head.length + tail.length > n:
            return False
        if head.length and head.regex.match(subject) is None:
            return False
        end = n - tail.length
        if tail.length and tail.regex.fullmatch(subject, end) is None:
            return False
        position = head.length
        for piece in self._middle:
            found = piece.regex.search(subject, position, end)
            if found is None:
                return False
            position = found.end()
        return True


def _after_stars(states: set[int], atoms: list[Atom | None]) -> set[int]:
    """The positions reachable without reading a character: a star may match nothing."""
    reached = set(states)
    for i in sorted(states):
        while i < len(atoms) and atoms[i] is _STAR:
            i += 1
            reached.add(i)
    return reached


def _longest_literal_run(pieces: list[list[Atom]]) -> str:
    """The longest literal substring every matching subject contains (after the first star)."""
    longest = ""
    for piece in pieces:
        run = ""
        for atom in [*piece, None]:
            if atom is not None and atom.literal is not None:
                run += atom.literal
                continue
            if len(run) > len(longest):
                longest = run
            run = ""
    return longest if len(longest) >= 2 else ""


def _regex_of(atoms: list[Atom | None]) -> str:
    """Phase two of `fnmatch.translate`: atomic groups for every interior `*fixed`."""
    pieces = _split_at_stars(atoms)
    out = ["".join(a.regex for a in pieces[0])]
    for index, piece in enumerate(pieces[1:], start=1):
        fixed = "".join(a.regex for a in piece)
        if index == len(pieces) - 1:
            out.append(".*" + fixed)
        else:
            out.append(f"(?>.*?{fixed})")
    return rf"(?s:{''.join(out)})\Z"


def compile_glob(pattern: str) -> CompiledGlob:
    return CompiledGlob(pattern)
