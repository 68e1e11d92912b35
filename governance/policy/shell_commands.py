"""Each simple command of a shell script, seen every way it can be matched.

A command yields one or more *views* (word lists joined by single spaces after
quote removal, leading assignments and redirections dropped):

- the command as written (`sudo rm -rf /`), and after each wrapper is unwrapped
  (`rm -rf /`), recursively through `sh -c`/`bash -c`/`eval` scripts;
- a program named by path is also seen by its base name (`/bin/rm` → `rm`).

A *binding* view counts as ASK when no rule matches it; a non-binding one only
counts when a rule matches it. So `/bin/rm -rf /` is NEVER through `rm *`, yet
`/tmp/ls` or `./ls` never becomes ALWAYS through `ls *` (the path view binds).
Transparent wrappers (see shell_wrappers) are non-binding, so `nohup ls` is
ALWAYS through `ls *` while `sudo ls` also needs a rule for `sudo ls`. A wrapper
named by a path outside the system directories is never transparent
(`/tmp/env ls` is not `env`).

*Concerns* keep a command at ASK or stricter: a program name computed at run time
(`$X`, `${X}`, `$(...)`) or shell-expanded (`r?`, `{rm,-rf,/}`), `eval`,
unparseable inner scripts, nesting deeper than `MAX_SCRIPT_DEPTH`, indirect or
arithmetic expansions, and assignments to any variable outside a short list of
inert ones: `PATH=`, `LD_PRELOAD=`, `BASH_ENV=`, `GIT_SSH_COMMAND=`, `PAGER=` and
their kin change what a program runs, so `LD_PRELOAD=/tmp/x.so ls` is not
`ls`. Redirections to files are writes (see subjects).
"""

from dataclasses import dataclass, field

from governance.policy.paths import normalise_path
from governance.policy.shell_syntax import (
    ShellSyntaxError,
    SimpleCommand,
    StdinText,
    Word,
    parse_script,
)
from governance.policy.shell_wrappers import WRAPPERS, Script

MAX_SCRIPT_DEPTH = 4
_INERT_VARIABLES = frozenset(
    {"LANG", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR"}
    | {"CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR"}
)
_SYSTEM_DIRECTORIES = frozenset(
    {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"}
)
_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


@dataclass(frozen=True)
class CommandView:
    text: str
    binding: bool


@dataclass
class WriteTarget:
    text: str
    computed: bool


@dataclass
class CommandReading:
    source: str
    views: list[CommandView] = field(default_factory=list)
    writes: list[WriteTarget] = field(default_factory=list)
    concerns: list[str] = field(default_factory=list)


def read_script(text: str, depth: int = 0) -> list[CommandReading]:
    """Every simple command of `text`, read; raises ShellSyntaxError."""
    readings: list[CommandReading] = []
    for command in parse_script(text):
        readings.extend(_read_command(command, depth))
    return readings


def _read_command(command: SimpleCommand, depth: int) -> list[CommandReading]:
    reading = CommandReading(source=command.source, concerns=list(command.concerns))
    readings = [reading]
    _check_assignments(command.assignments, reading)
    for redirect in command.redirects:
        if not redirect.target.process_substitution:
            reading.writes.append(_write_target(redirect.target))
    if command.words:
        _unwrap(command.words, command.stdin, depth, reading, readings)
    return readings


def _write_target(word: Word) -> WriteTarget:
    return WriteTarget(word.text, computed=not word.literal or word.has_glob)


def _unwrap(
    words: list[Word],
    stdin: list[StdinText],
    depth: int,
    reading: CommandReading,
    readings: list[CommandReading],
) -> None:
    while True:
        program, arguments = words[0], words[1:]
        as_written = _join(words)
        problem = _program_problem(program)
        if problem:
            reading.concerns.append(problem)
            reading.views.append(CommandView(as_written, binding=True))
            return
        name = program.text
        base = name.rsplit("/", 1)[-1] if "/" in name else name
        if "/" in name:
            base = normalise_path(name).rsplit("/", 1)[-1]
        unwrapper = WRAPPERS.get(base) if _is_trusted_location(name) else None
        step = unwrapper(base, arguments, stdin) if unwrapper else None
        transparent = step is not None and step.transparent and step.concern is None
        reading.views.append(CommandView(as_written, binding=not transparent))
        if "/" in name:
            rest = [w.text for w in arguments]
            for alias in dict.fromkeys([normalise_path(name), base]):
                if alias != name:
                    reading.views.append(CommandView(" ".join([alias, *rest]), binding=False))
        if base == "find":
            _read_find_actions(arguments, depth, reading, readings)
        if unwrapper is None and base in WRAPPERS:
            # A wrapper named by an untrusted path: still look inside, for NEVER rules.
            step = WRAPPERS[base](base, arguments, stdin)
        if step is None:
            return
        if step.concern:
            reading.concerns.append(step.concern)
        _check_assignments(step.assignments, reading)
        reading.writes.extend(_write_target(word) for word in step.writes)
        if step.script is not None:
            _read_inner_script(step.script, depth, reading, readings)
            return
        if not step.words:
            return
        words, stdin = step.words, []


def _program_problem(program: Word) -> str | None:
    if not program.literal:
        return "the program name is computed when the command runs"
    if program.has_glob:
        return "the program name contains a pattern the shell expands"
    if not program.text or any(c in program.text for c in " \t\n"):
        return "the program name is empty or contains blanks"
    return None


def _is_trusted_location(name: str) -> bool:
    if "/" not in name:
        return True
    directory = normalise_path(name).rsplit("/", 1)[0]
    return directory in _SYSTEM_DIRECTORIES


def _read_inner_script(
    script: Script, depth: int, reading: CommandReading, readings: list[CommandReading]
) -> None:
    if depth + 1 > MAX_SCRIPT_DEPTH:
        reading.concerns.append(f"scripts nested more than {MAX_SCRIPT_DEPTH} deep are not read")
        reading.views.append(CommandView(script.text, binding=False))
        return
    if not script.literal:
        reading.concerns.append("the inner script is computed when the command runs")
    try:
        readings.extend(read_script(script.text, depth + 1))
    except ShellSyntaxError as error:
        reading.concerns.append(f"the inner script cannot be parsed: {error}")
        reading.views.append(CommandView(script.text, binding=False))


def _read_find_actions(
    arguments: list[Word], depth: int, reading: CommandReading, readings: list[CommandReading]
) -> None:
    """`find ... -exec CMD {} ;` runs CMD: each one is read as a command of its own."""
    k = 0
    while k < len(arguments):
        if arguments[k].text not in _FIND_ACTIONS:
            k += 1
            continue
        end = k + 1
        while end < len(arguments) and arguments[end].text not in (";", "+"):
            end += 1
        inner = arguments[k + 1 : end]
        if inner:
            inner_reading = CommandReading(source=_join(inner))
            readings.append(inner_reading)
            _unwrap(inner, [], depth, inner_reading, readings)
        k = end + 1


def _check_assignments(assignments: list[Word], reading: CommandReading) -> None:
    for word in assignments:
        name = word.text.split("=", 1)[0].split("[", 1)[0].rstrip("+")
        if name not in _INERT_VARIABLES and not name.startswith("LC_"):
            reading.concerns.append(f"the assignment to {name} can change what the command runs")


def _join(words: list[Word]) -> str:
    return " ".join(word.text for word in words)
