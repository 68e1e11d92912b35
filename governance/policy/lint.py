"""Warnings about rules that cannot do what their author meant.

- `shadowed`: an earlier rule matches every key this rule matches, so it never
  decides anything. Decided soundly, never reporting a false shadow, by three
  checks that each prove it: the same pattern; this rule matches one string only
  and the earlier rule matches that string; or the earlier rule is `P*S` with
  literal `P` and `S` (`*` and `X*` included) while every key of this rule starts
  with `P`, ends with `S` and is at least `len(P) + len(S)` long (from its literal
  prefix, literal suffix and minimum length). Shadowing by several earlier rules
  together, or of a wildcard rule by a `?`/`[...]` pattern, is not detected.
- `unknown-tool`: no known tool name `T` admits any key `T:...` that the pattern
  matches (exact: the pattern is run as an automaton over `T:`). Skipped when no
  tools are known.
- `shell-argument-injection`: an ALWAYS rule for a shell tool with a `*` in the
  command part (`git *`, `find *`, `cat /workspace/*`): a star also matches extra
  arguments. The acting options of programs in the table (acting_options) still
  need a rule that names them; the options of other programs are not checked.
- `acting-option`: an ALWAYS rule for a shell tool that names acting options
  (`find * -delete`): which rule, which program, which options it admits.
- `config-path`: an ALWAYS rule that names a file which configures what programs
  run or holds credentials (`write_file:/workspace/.git/hooks/*`).
- `pattern-too-long`: over 1 KiB; calls that reach it fail closed (ASK).
- `invisible-character`: the pattern contains a character a reviewer cannot see.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from governance.policy.acting_options import ACTING, canonical_program, pattern_names
from governance.policy.compiled import CompiledPolicy, rule_number
from governance.policy.config_paths import CONFIG_PATHS
from governance.policy.document import PolicyDocument, Rule
from governance.policy.globs import MAX_PATTERN_BYTES, Atom, GlobError, parse_atoms
from governance.policy.invisible import describe_invisible, first_invisible
from governance.policy.subjects import MatchArgument
from governance.policy.verdicts import Verdict

_STAR = None


@dataclass(frozen=True)
class LintWarning:
    rule_index: int  # 0-based position; people are shown `rule_number`
    code: str
    message: str

    @property
    def rule_number(self) -> int:
        return rule_number(self.rule_index)


def lint(
    document: PolicyDocument | Iterable[Rule],
    known_tools: Mapping[str, MatchArgument | None] | None = None,
) -> list[LintWarning]:
    rules = list(document.rules if isinstance(document, PolicyDocument) else document)
    known_tools = known_tools or {}
    shadows = _ShadowIndex(rules)
    warnings: list[LintWarning] = []
    for index, rule in enumerate(rules):
        pattern = rule.pattern
        if len(pattern.encode("utf-8", "surrogatepass")) > MAX_PATTERN_BYTES:
            warnings.append(
                LintWarning(
                    index,
                    "pattern-too-long",
                    f"the pattern is longer than {MAX_PATTERN_BYTES} bytes: "
                    "every call that reaches it is ASK",
                )
            )
            continue
        atoms = parse_atoms(pattern)
        hidden = first_invisible(pattern, layout_is_visible=False)
        if hidden:
            warnings.append(
                LintWarning(
                    index,
                    "invisible-character",
                    f"the pattern contains the invisible character {describe_invisible(hidden)}",
                )
            )
        earlier = shadows.shadowing(index, atoms)
        if earlier is not None:
            warnings.append(
                LintWarning(
                    index,
                    "shadowed",
                    f"never decides anything: rule {rule_number(earlier)} "
                    f"({rules[earlier].pattern!r}) matches every call that {pattern!r} matches",
                )
            )
        shadows.add(index, atoms)
        if known_tools:
            warnings += _tool_warnings(index, rule, atoms, known_tools)
    return warnings


class _ShadowIndex:
    """Earlier rules by pattern and by `P*S` shape, so each rule is checked in ~len(prefix)."""

    def __init__(self, rules: list[Rule]):
        self._rules = rules
        self._compiled = CompiledPolicy(rules)
        self._first_by_pattern: dict[str, int] = {}
        self._star_forms: dict[str, list[tuple[str, int]]] = {}

    def shadowing(self, index: int, atoms: list[Atom | None]) -> int | None:
        pattern = self._rules[index].pattern
        if pattern in self._first_by_pattern:
            return self._first_by_pattern[pattern]
        if all(a is not _STAR and a.literal is not None for a in atoms):
            try:
                first = self._compiled.first_match("".join(a.literal for a in atoms))
            except GlobError:
                return None
            return first if first is not None and first < index else None
        head = "".join(_literal_run(atoms))
        tail = "".join(reversed(_literal_run(list(reversed(atoms)))))
        shortest = sum(1 for a in atoms if a is not _STAR)
        found = [
            earlier
            for cut in range(len(head) + 1)
            for suffix, earlier in self._star_forms.get(head[:cut], ())
            if tail.endswith(suffix) and shortest >= cut + len(suffix)
        ]
        return min(found, default=None)

    def add(self, index: int, atoms: list[Atom | None]) -> None:
        self._first_by_pattern.setdefault(self._rules[index].pattern, index)
        stars = [i for i, a in enumerate(atoms) if a is _STAR]
        if len(stars) != 1 or any(a is not _STAR and a.literal is None for a in atoms):
            return
        head = "".join(a.literal for a in atoms[: stars[0]])
        tail = "".join(a.literal for a in atoms[stars[0] + 1 :])
        self._star_forms.setdefault(head, []).append((tail, index))


def _tool_warnings(
    index: int,
    rule: Rule,
    atoms: list[Atom | None],
    known_tools: Mapping[str, MatchArgument | None],
) -> list[LintWarning]:
    prefix = "".join(_literal_run(atoms))
    if ":" in prefix:
        tool = prefix.split(":", 1)[0]
        matching = [tool] if tool in known_tools and _satisfiable(atoms) else []
    else:
        matching = [
            tool
            for tool in known_tools
            if tool.startswith(prefix) and _admits_tool(rule.pattern, tool)
        ]
    if not matching:
        return [
            LintWarning(
                index,
                "unknown-tool",
                f"{rule.pattern!r} matches no known tool (bundles and connection photographs)",
            )
        ]
    if rule.action is not Verdict.ALWAYS:
        return []
    warnings = _config_path_warnings(index, rule)
    for tool in matching:
        kind = known_tools[tool]
        if kind is None or kind.kind != "shell":
            continue
        command = _command_part(rule.pattern, atoms, tool)
        program = canonical_program((command or "").split(" ", 1)[0])
        admitted = _admitted_acting_options(program, rule.pattern)
        if admitted:
            listed = ", ".join(f"{option} ({what})" for option, what in admitted)
            warnings.append(
                LintWarning(
                    index,
                    "acting-option",
                    f"{rule.pattern!r} admits {program}'s acting options: {listed}",
                )
            )
        if command is not None and "*" not in command:
            continue
        shown = command if command is not None else "any command"
        table = sorted({o for k, t in ACTING.items() if k.split()[0] == program for o in t if o})
        more = ", ..." if len(table) > 6 else ""
        hint = (
            f"{program}'s acting options ({', '.join(table[:6])}{more}) still need a rule "
            "that names them"
            if table
            else "options of programs outside the acting-options table are not checked"
        )
        warnings.append(
            LintWarning(
                index,
                "shell-argument-injection",
                f"ALWAYS {rule.pattern!r} lets {tool} run {shown!r} with any arguments: {hint}",
            )
        )
    return warnings


def _admitted_acting_options(program: str, pattern: str) -> list[tuple[str, str]]:
    found: dict[str, str] = {}
    for key, table in ACTING.items():
        if key.split()[0] != program:
            continue
        for option, what in table.items():
            named = option if option else key.split()[-1]
            if option not in ("", "NAME=", "+") and pattern_names(pattern, named):
                found.setdefault(named, what)
            elif (
                not option
                and len(key.split()) > 1
                and pattern_names(pattern, " ".join(key.split()[1:]))
            ):
                found.setdefault(" ".join(key.split()[1:]), what)
    return sorted(found.items())


def _config_path_warnings(index: int, rule: Rule) -> list[LintWarning]:
    named = [name for name in CONFIG_PATHS if name in rule.pattern]
    if not named:
        return []
    return [
        LintWarning(
            index,
            "config-path",
            f"{rule.pattern!r} names {', '.join(named)}: it admits files that "
            "configure what programs run or hold credentials",
        )
    ]


def _command_part(pattern: str, atoms: list[Atom | None], tool: str) -> str | None:
    """The pattern after `tool:` when that prefix is literal, else None (a wildcard spans it)."""
    head = tool + ":"
    if len(atoms) < len(head):
        return None
    for atom, char in zip(atoms, head, strict=False):
        if atom is _STAR or atom.literal != char:
            return None
    return "".join("*" if a is _STAR else (a.literal or "?") for a in atoms[len(head) :])


def _literal_run(atoms: list[Atom | None]) -> list[str]:
    run = []
    for atom in atoms:
        if atom is _STAR or atom.literal is None:
            break
        run.append(atom.literal)
    return run


@lru_cache(maxsize=4096)
def _atom_regex(regex: str) -> re.Pattern:
    return re.compile(regex, re.DOTALL)


# Keyed by the pattern's text (at most MAX_PATTERN_BYTES), not by its atoms (an object per
# character, ~19 KiB for a long pattern), and 8,192 at most: a draft is linted on every
# request of the policy editor, and 65,536 remembered atom tuples held a process's ~1.2 GiB.
@lru_cache(maxsize=8192)
def _admits_tool(pattern: str, tool: str) -> bool:
    """Does some key `tool:...` match? An NFA walk over `tool:`, then a satisfiability check."""
    atoms = parse_atoms(pattern)

    def closure(states: set[int]) -> set[int]:
        out = set(states)
        for state in sorted(states):
            position = state
            while position < len(atoms) and atoms[position] is _STAR:
                position += 1
                out.add(position)
        return out

    states = closure({0})
    for char in tool + ":":
        following = set()
        for state in states:
            if state == len(atoms):
                continue
            atom = atoms[state]
            if atom is _STAR:
                following.add(state)
            elif _atom_regex(atom.regex).fullmatch(char):
                following.add(state + 1)
        states = closure(following)
        if not states:
            return False
    return any(_satisfiable(atoms[s:]) for s in states)


def _satisfiable(atoms) -> bool:
    """Some string matches: no atom is an empty class."""
    return all(a is _STAR or a.regex != "(?!)" for a in atoms)
