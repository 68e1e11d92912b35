"""Programs that run another program: how to find the command they wrap.

Each unwrapper receives the wrapper's arguments (and, for a shell, the texts fed to
its standard input) and returns what it will run, or None when it runs nothing else
(`env` alone, `command -v x`): the command is then matched as itself. An option it
does not know is a concern (ASK) rather than a guess at where the command starts.

Transparent wrappers change nothing about what the inner command may do (`nice`,
`nohup`, `timeout`, `env`, `command`, `exec`, `stdbuf`, `setsid`, `sh -c`...): the
inner command alone decides an ALWAYS. The others (`sudo`, `xargs`, `npx`, `watch`)
add power or hidden arguments, so the wrapper form must be allowed too.

Shells: `sh`/`dash` scripts are read as dash, `bash` as bash, `zsh` as zsh; any
other shell, a start-up option (`-i`, `-l`, `--login`, `--rcfile`, `--init-file`,
`-O`, an `-o` other than pipefail/errexit/nounset/xtrace), or a shell reading its
script from a file or from standard input is a concern.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from governance.policy.acting_options import (
    ACTING,
    PACKAGE_MANAGER_COMMANDS,
    RUNS_PROJECT_CODE,
    WRITES,
    canonical_program,
)

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
DIALECT_OF_SHELL = {"sh": "sh", "dash": "sh", "bash": "bash", "zsh": "zsh"}
SHELLS = frozenset({*DIALECT_OF_SHELL, "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh"})
_SHELL_OPTIONS = frozenset({"pipefail", "errexit", "nounset", "xtrace"})


@dataclass
class Unwrapped:
    words: list[str] = field(default_factory=list)
    transparent: bool = True
    assignments: list[str] = field(default_factory=list)
    script: str | None = None
    dialect: str | None = None  # the shell the script is read in; None: the caller's own
    concern: str | None = None
    writes: list[str] = field(default_factory=list)
    appends_input: bool = False  # the wrapped command also gets words read from input
    # ... and input does more than add words at the end (`xargs -I` splices it into a word,
    # `--process-slot-var` names a variable of the command's environment).
    input_does_more: bool = False
    # The wrapped command may go on after the wrapper returns (`setsid -f`), as `&` sends it.
    detaches: bool = False


@dataclass(frozen=True)
class _Options:
    flags: str = ""
    valued: str = ""
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    # options whose value is optional and only ever glued (`script -tFILE`, `--timing=FILE`)
    optional: str = ""
    long_optional: frozenset[str] = frozenset()


class _UnknownOption(Exception):
    pass


def _skip_options(
    program: str,
    args: list[str],
    spec: _Options,
    taken: dict[str, str] | None = None,
    every: list[tuple[str, str]] | None = None,
) -> int:
    """Index of the first operand after `program`'s options; values land in `taken` (the
    last of each option) and in `every` (each one, in order)."""
    k = 0
    while k < len(args):
        text = args[k]
        if not text.startswith("-") or text == "-":
            return k
        if text == "--":
            return k + 1
        if text.startswith("--"):
            name, has_value, value = text[2:].partition("=")
            if name in spec.long_valued:
                if not has_value:
                    k += 1
                    value = args[k] if k < len(args) else ""
                if taken is not None:
                    taken[name] = value
                if every is not None:
                    every.append((name, value))
            elif name in spec.long_optional:
                if has_value and every is not None:
                    every.append((name, value))
            elif name not in spec.long_flags:
                raise _UnknownOption(f"{program}: unrecognised option {text!r}")
            k += 1
            continue
        for position, letter in enumerate(text[1:], start=1):
            if letter in spec.valued:
                value = text[position + 1 :]
                if not value:
                    k += 1
                    value = args[k] if k < len(args) else ""
                if taken is not None:
                    taken[letter] = value
                if every is not None:
                    every.append((letter, value))
                break
            if letter in spec.optional:
                if text[position + 1 :] and every is not None:
                    every.append((letter, text[position + 1 :]))
                break
            if letter not in spec.flags:
                raise _UnknownOption(f"{program}: unrecognised option {'-' + letter!r}")
        k += 1
    return k


def _leading_assignments(args: list[str]) -> int:
    k = 0
    while k < len(args) and _ASSIGNMENT.match(args[k]):
        k += 1
    return k


Unwrapper = Callable[[str, list[str], list[str]], Unwrapped | None]


def _guarded(unwrap: Unwrapper) -> Unwrapper:
    def run(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
        try:
            return unwrap(program, args, stdin)
        except _UnknownOption as error:
            return Unwrapped(concern=str(error))

    return run


_ENV = _Options(
    flags="i0v",
    valued="uCS",
    long_flags=frozenset(
        {"ignore-environment", "null", "debug", "list-signal-handling", "ignore-signal"}
        | {"default-signal", "block-signal"}
    ),
    long_valued=frozenset({"unset", "chdir", "split-string"}),
)


@_guarded
def _env(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    taken: dict[str, str] = {}
    k = 0
    while True:
        k += _skip_options(program, args[k:], _ENV, taken)
        if k < len(args) and args[k] == "-":
            k += 1
            continue
        break
    assignments = _leading_assignments(args[k:])
    words = args[k + assignments :]
    split = taken.get("S", taken.get("split-string"))
    if split is not None:
        return Unwrapped(
            script=f"{split} {' '.join(words)}".strip(),
            assignments=args[k : k + assignments],
            concern="env -S splits a string into a command",
        )
    if not words:
        return None
    directory = taken.get("C", taken.get("chdir"))
    # `env -C /etc touch x` writes /etc/x: the command runs where the engine does not follow.
    concern = f"env --chdir runs the command in {directory}" if directory is not None else None
    cleared = any(w == "-" or _sets_flag(w, "i", "ignore-environment", _ENV) for w in args[:k])
    if cleared or "u" in taken or "unset" in taken:
        # With no PATH, bash searches its own default, which ends in `.`: `env -i bash -c
        # tree` runs a `./tree` the script made; TMPDIR and HOME fall back elsewhere (F139).
        concern = "env clears or unsets variables: PATH, TMPDIR and HOME take their defaults"
    return Unwrapped(words=words, assignments=args[k : k + assignments], concern=concern)


_SUDO = _Options(
    flags="AbBEeHKklNnPSVv",
    valued="ugCDhprtTUc",
    long_flags=frozenset(
        {"askpass", "background", "bell", "preserve-env", "set-home", "no-update"}
        | {"remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups"}
        | {"stdin", "validate", "version", "help", "edit"}
    ),
    long_valued=frozenset(
        {"user", "group", "close-from", "chdir", "host", "prompt", "role", "type"}
        | {"command-timeout", "other-user", "login-class"}
    ),
)


@_guarded
def _sudo(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    k = _skip_options(program, args, _SUDO)
    if any(_sets_flag(word, "e", "edit", _SUDO) for word in args[:k]):
        return None  # sudoedit: edits files, runs no command
    assignments = _leading_assignments(args[k:])
    words = args[k + assignments :]
    if not words:
        return None
    return Unwrapped(words=words, assignments=args[k : k + assignments], transparent=False)


def _sets_flag(text: str, letter: str, long_name: str, spec: _Options) -> bool:
    if text.startswith("--"):
        return text[2:] == long_name
    if not text.startswith("-"):
        return False
    for option in text[1:]:
        if option == letter:
            return True
        if option in spec.valued:
            return False
    return False


_XARGS = _Options(
    flags="0oprtxeil",
    valued="adEILnPs",
    long_flags=frozenset(
        {"null", "open-tty", "interactive", "no-run-if-empty", "verbose", "exit", "show-limits"}
        | {"eof", "replace", "max-lines"}
    ),
    long_valued=frozenset(
        {"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}
    ),
)


@_guarded
def _xargs(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    # -e/-i/-l take an optional value glued to them: the whole word is one flag.
    flags = [w[:2] if len(w) > 2 and w[0] == "-" and w[1] in "eil" else w for w in args]
    taken: dict[str, str] = {}
    k = _skip_options(program, flags, _XARGS, taken)
    return Unwrapped(
        words=args[k:] or ["echo"],
        transparent=False,
        appends_input=True,
        input_does_more=_xargs_replaces(flags[:k]) or "process-slot-var" in taken,
    )


def _xargs_replaces(options: list[str]) -> bool:
    """Whether xargs' options include -I/-i/--replace (input replaces a word's part)."""
    for word in options:
        if word.startswith("--"):
            if word[2:].partition("=")[0] == "replace":
                return True
            continue
        for letter in word[1:]:
            if letter in "iI":
                return True
            if letter in _XARGS.valued:
                break
    return False


def _simple(
    spec: _Options, operands_before_command: int = 0, *, detaches: bool = False
) -> Unwrapper:
    @_guarded
    def unwrap(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
        k = _skip_options(program, args, spec) + operands_before_command
        return Unwrapped(words=args[k:], detaches=detaches) if args[k:] else None

    return unwrap


_TIME = _Options(
    flags="apqv",
    valued="fo",
    long_flags=frozenset({"append", "portability", "quiet", "verbose"}),
    long_valued=frozenset({"format", "output"}),
)


@_guarded
def _time(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    taken: dict[str, str] = {}
    k = _skip_options(program, args, _TIME, taken)
    output = taken.get("o", taken.get("output"))
    writes = [output] if output else []
    if not args[k:]:
        return Unwrapped(writes=writes) if writes else None
    return Unwrapped(words=args[k:], writes=writes)


@_guarded
def _nice(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    if args and re.fullmatch(r"-\d+", args[0]):
        args = args[1:]
    k = _skip_options(program, args, _Options(valued="n", long_valued=frozenset({"adjustment"})))
    return Unwrapped(words=args[k:]) if args[k:] else None


@_guarded
def _command(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    spec = _Options(flags="pvV")
    k = _skip_options(program, args, spec)
    # `--` ends the options: it is no `-v` (an empty long name matched it, hiding the command).
    options = [w for w in args[:k] if w != "--"]
    if any(_sets_flag(w, "v", "", spec) or _sets_flag(w, "V", "", spec) for w in options):
        return None  # a lookup, not a run
    return Unwrapped(words=args[k:]) if args[k:] else None


@_guarded
def _exec(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    k = _skip_options(program, args, _Options(flags="cl", valued="a"))
    # `exec -a -bash bash` and `exec -l bash` start a login shell; `-c` empties the environment.
    concern = (
        f"exec {' '.join(args[:k])} changes how the command starts"
        if k and args[0] != "--"
        else None
    )
    return Unwrapped(words=args[k:], concern=concern) if args[k:] else None


def _rest(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    return Unwrapped(words=args) if args else None


def _builtin(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    # `builtin -- printf -v NAME`: bash's builtin takes `--` before the name.
    return _rest(program, args[1:] if args[:1] == ["--"] else args, stdin)


def _busybox(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    if not args:
        return None
    return Unwrapped(words=args, concern="busybox applets differ from the programs they name")


@_guarded
def _shell(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    dialect = DIALECT_OF_SHELL.get(program)
    concerns = [] if dialect else [f"{program} scripts are not read exactly (bash, sh, zsh are)"]
    k, runs_string = 0, False
    while k < len(args):
        text = args[k]
        if text in ("--", "-"):
            k += 1
            break
        if text in ("--norc", "--noprofile") and program == "bash":
            k += 1
            continue
        if text.startswith("--"):
            concerns.append(f"{program} {text} changes what the shell reads at start-up")
            k += 2 if text in ("--rcfile", "--init-file") else 1
            continue
        if len(text) > 1 and text[0] in "-+":
            for letter in text[1:]:
                if letter == "c" and text[0] == "-":
                    runs_string = True
                elif letter == "o":
                    k += 1
                    if k >= len(args) or args[k] not in _SHELL_OPTIONS:
                        concerns.append(f"{program} -o with an option other than pipefail/...")
                elif letter not in "euxvf":
                    concerns.append(f"{program} {text[0]}{letter} changes how the shell starts")
            k += 1
            continue
        break
    operands = args[k:]
    concern = "; ".join(concerns) or None
    if runs_string:
        if not operands:
            return Unwrapped(concern=concern) if concern else None
        script = _with_positional_parameters(operands[0], operands[1:])
        return Unwrapped(script=script, dialect=dialect or "bash", concern=concern)
    source = "a file" if operands else "its standard input"
    concern = "; ".join([*concerns, f"{program} reads its script from {source}"])
    if (not operands or operands[0] in _STANDARD_INPUT) and stdin:
        return Unwrapped(script=stdin[-1], dialect=dialect or "bash", concern=concern)
    return Unwrapped(concern=concern)


_STANDARD_INPUT = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_SHELL_SYNTAX = re.compile(r"[;&|<>()$`\"'\\\n{}*?\[\]~#=]")
_POSITIONAL = re.compile(r'"\$@"|"\$\{@\}"|\$[@*]|\$\{[@*]\}|\$\{?(\d)\}?')


def _with_positional_parameters(script: str, parameters: list[str]) -> str:
    """`sh -c '$0 $1 $2' rm -rf x`: the script, and after it the script with `$0`, `$N`, `$@`
    and `$*` put in from the words after it (the reading of both must be allowed) (F140)."""
    if not parameters or not _POSITIONAL.search(script):
        return script

    def value(match: re.Match) -> str:
        # A value is data: split into words, never read as code. Only plain words are put in
        # (`$0 $1` of `rm -rf /x`); a value with quotes, `$`, `;`… is left as the parameter.
        chosen = parameters[1:] if match.group(1) is None else parameters[int(match.group(1)) :][:1]
        if any(_SHELL_SYNTAX.search(each) for each in chosen):
            return match.group(0)
        return " ".join(chosen)

    return f"{script}\n{_POSITIONAL.sub(value, script)}"


def _eval(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    if not args:
        return None
    return Unwrapped(
        script=" ".join(args), transparent=False, concern="eval runs its arguments as a script"
    )


def _trap(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    args = args[1:] if args[:1] == ["--"] else args  # `trap -- 'CMD' EXIT` (F140)
    script = args[0] if args and not args[0].startswith("-") else None
    return Unwrapped(script=script, transparent=False, concern="trap runs a script later")


def _code_options(letter: str, what: str):
    """Builtins whose option `-LETTER CODE` is a command the shell runs later: `mapfile -C
    CMD`, `complete -C CMD` (F131). The code is read (a NEVER rule in it counts)."""

    def unwrap(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
        codes = [args[k + 1] for k, a in enumerate(args[:-1]) if a == f"-{letter}"]
        codes += [a[2:] for a in args if a.startswith(f"-{letter}") and len(a) > 2]
        if not codes:
            return None
        return Unwrapped(script="\n".join(codes), transparent=False, concern=what)

    return unwrap


def _alias(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    """`alias ls='rm -rf x'`: what a later `ls` runs (F131)."""
    values = [a.partition("=")[2] for a in args if "=" in a and not a.startswith("-")]
    if not values:
        return None
    return Unwrapped(script="\n".join(values), transparent=False, concern="alias defines commands")


def _bind(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    """`bind -x '"\\C-x": CMD'`: CMD runs on that key (F131)."""
    codes = [args[k + 1] for k, a in enumerate(args[:-1]) if a == "-x"]
    if not codes:
        return None
    script = "\n".join(code.partition(":")[2] for code in codes)
    return Unwrapped(script=script, transparent=False, concern="bind -x runs a command")


_NPX = _Options(
    flags="yq",
    valued="pc",
    long_flags=frozenset({"yes", "no", "no-install", "quiet", "ignore-existing"}),
    long_valued=frozenset({"package", "call"}),
)


@_guarded
def _npx(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    taken: dict[str, str] = {}
    k = _skip_options(program, args, _NPX, taken)
    call = taken.get("c", taken.get("call"))
    if call is not None:
        return Unwrapped(script=call, dialect="sh", transparent=False, concern="npx -c: a script")
    concern = "npx --package installs a package first" if taken else None
    return Unwrapped(words=args[k:], transparent=False, concern=concern) if args[k:] else None


def _subcommand_runner(subcommand: str) -> Unwrapper:
    """`uv run CMD`, `poetry run CMD`: the command runs in the project's environment."""

    def unwrap(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
        if args[:1] != [subcommand] or len(args) < 2:
            return None
        if args[1].startswith("-"):
            return Unwrapped(words=args[1:], transparent=False, concern=f"{program} options")
        return Unwrapped(words=args[1:], transparent=False)

    return unwrap


# pnpm runs a first word that is none of its commands as the project's script of that name
# or, with none, as `pnpm exec WORD …`: any program on the PATH (`pnpm node -e …`, `pnpm -r
# bash -c …`) (F122). A word the engine knows as a program (one whose options or writes it
# reads, a shell, an interpreter, a path) is read as the command it starts, which the rules
# must allow too; any other is taken for a script's name (`pnpm build`, `pnpm lint`).
_PNPM_VALUED = frozenset(
    {"-C", "--dir", "--prefix", "-F", "--filter", "--filter-prod", "--reporter", "--loglevel"}
    | {"--workspace-concurrency", "--resume-from", "--changed-files-ignore-pattern"}
    | {"--test-pattern", "--lockfile-dir", "--store-dir", "--modules-dir", "--registry"}
)
_PNPM_FLAGS = frozenset(
    {"-r", "--recursive", "-w", "--workspace-root", "-s", "--silent", "--stream", "--parallel"}
    | {"--aggregate-output", "--color", "--no-color", "--if-present", "--report-summary"}
    | {"--sort", "--no-sort", "--reverse", "--fail-if-no-match", "--bail", "--no-bail"}
)
_OTHER_PROGRAMS = frozenset(
    {"nc", "ncat", "netcat", "socat", "telnet", "lua", "tclsh", "kill", "pkill", "killall"}
    | {"open", "xdg-open", "osascript", "crontab", "systemctl", "sudo", "su", "doas"}
)


def _known_program(word: str) -> bool:
    program = canonical_program(word)
    return (
        "/" in word
        or program in _PROGRAMS_KNOWN
        or program in SHELLS
        or program in WRAPPERS
        or program in _OTHER_PROGRAMS
    )


_PROGRAMS_KNOWN = frozenset(
    {key.split()[0] for key in ACTING} | set(WRITES) | set(RUNS_PROJECT_CODE)
)


def _pnpm(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    k = 0
    while k < len(args) and args[k].startswith("-"):
        k += 2 if args[k] in _PNPM_VALUED else 1
    # after an option it does not know, its value or the command: each is looked at
    unknown = k > 0 and args[k - 1] not in _PNPM_FLAGS and "=" not in args[k - 1]
    for at in (k, k + 1) if unknown and args[k - 1].startswith("-") else (k,):
        if at < len(args) and args[at] in PACKAGE_MANAGER_COMMANDS - {"node"}:  # yarn's only
            return None
        if at < len(args) and _known_program(args[at]):
            return Unwrapped(words=args[at:], transparent=False)
    return None


def _watch(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    if not args:
        return None
    if args[0].startswith("-"):
        return Unwrapped(script=" ".join(args), concern="watch options", transparent=False)
    return Unwrapped(script=" ".join(args), dialect="sh", transparent=False)


def _opaque(
    spec: _Options, operands_before_command: int = 0, code: str = "", creates_operand: bool = False
) -> Unwrapper:
    """A wrapper the engine reads through for what it runs, but does not pass as the command
    it wraps: scheduling, locks, privileges, limits (`ionice rm -rf x` is `rm -rf x` to a
    NEVER rule, and needs a rule of its own to be allowed) (F140). `code`: the option whose
    value is a script (`flock F -c CMD`). `creates_operand`: the operand before the command
    is a file the wrapper creates when it runs one (`flock /etc/x true` opens /etc/x with
    O_CREAT; `flock 9`, with no command, locks a descriptor)."""

    @_guarded
    def unwrap(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
        taken: dict[str, str] = {}
        k = _skip_options(program, args, spec, taken)
        operand = args[k : k + 1] if creates_operand and args[k + 1 :] else []
        script = taken.get(code, taken.get("command")) if code else None
        if script is not None:
            return Unwrapped(script=script, transparent=False, writes=operand)
        k += operands_before_command
        if k < len(args) and code and args[k] in (f"-{code}", f"--{code}", "--command"):
            script = " ".join(args[k + 1 : k + 2])
            return Unwrapped(script=script, transparent=False, writes=operand)
        if not args[k:]:
            return None
        return Unwrapped(words=args[k:], transparent=False, writes=operand)

    return unwrap


_SCRIPT = _Options(
    flags="aefqhV",
    valued="BcEImoOT",
    long_flags=frozenset({"append", "return", "flush", "force", "quiet", "help", "version"}),
    long_valued=frozenset({"command", "echo", "log-in", "log-out", "log-io", "log-timing"})
    | frozenset({"logging-format", "output-limit"}),
    optional="t",
    long_optional=frozenset({"timing"}),
)
_SCRIPT_STREAM_LOGS = frozenset("BIO") | {"log-in", "log-out", "log-io"}
_SCRIPT_LOGS = _SCRIPT_STREAM_LOGS | frozenset("Tt") | {"log-timing", "timing"}


@_guarded
def _script(program: str, args: list[str], stdin: list[str]) -> Unwrapped | None:
    """util-linux `script [options] [FILE]`: it writes its typescript (FILE, or ./typescript
    when no log is named) and every log its options name, and runs `$SHELL -c CMD`, or with no
    `-c` an interactive shell that reads its commands from standard input. getopt permutes:
    options after the file are options too."""
    taken: dict[str, str] = {}
    every: list[tuple[str, str]] = []
    operands: list[str] = []
    k = 0
    while k < len(args):
        k += _skip_options(program, args[k:], _SCRIPT, taken, every)
        if args[k - 1 : k] == ["--"]:
            operands += args[k:]
            break
        if k < len(args):
            operands.append(args[k])
            k += 1
    options = [w for w in args[:k] if w.startswith("-")]
    if any(_sets_flag(w, "V", "version", _SCRIPT) for w in options) or any(
        _sets_flag(w, "h", "help", _SCRIPT) for w in options
    ):
        return None
    logs = [value for name, value in every if name in _SCRIPT_LOGS] + operands[:1]
    if not operands and not any(name in _SCRIPT_STREAM_LOGS for name, _ in every):
        logs.append("typescript")
    command = taken.get("c", taken.get("command"))
    if command is None:
        return Unwrapped(
            transparent=False,
            writes=logs,
            concern="script runs an interactive shell that reads its commands from its input",
        )
    return Unwrapped(script=command, transparent=False, writes=logs)


def _runs_a_program(what: str, operands_before_command: int = 0) -> Unwrapper:
    """A program that runs another whose options the engine does not read (`setarch x86_64
    rm -rf x`, `fakeroot rm`, `valgrind rm`): always a concern, even under a rule that names
    it; the words after its leading options are read for NEVER rules (F154)."""

    def unwrap(program: str, args: list[str], stdin: list[str]) -> Unwrapped:
        k = operands_before_command
        while k < len(args) and args[k].startswith("-"):
            k += 1
        return Unwrapped(words=args[k:], transparent=False, concern=f"{program} {what}")

    return unwrap


_RUNS_ITS_COMMAND = "runs the program its arguments name, with options the engine does not read"

WRAPPERS: dict[str, Unwrapper] = {
    "env": _env,
    "sudo": _sudo,
    "doas": _sudo,
    "xargs": _xargs,
    "time": _time,
    "nice": _nice,
    "command": _command,
    "builtin": _builtin,
    "busybox": _busybox,
    "eval": _eval,
    "trap": _trap,
    **dict.fromkeys(("mapfile", "readarray"), _code_options("C", "mapfile runs a callback")),
    **dict.fromkeys(("complete", "compgen"), _code_options("C", "complete runs a command")),
    "alias": _alias,
    "bind": _bind,
    "exec": _exec,
    "npx": _npx,
    "pnpm": _pnpm,
    "watch": _watch,
    "uv": _subcommand_runner("run"),
    "poetry": _subcommand_runner("run"),
    "pipenv": _subcommand_runner("run"),
    "bundle": _subcommand_runner("exec"),  # `bundle exec rspec -r x.rb`: rspec's options
    "nohup": _simple(_Options(long_flags=frozenset())),
    "timeout": _simple(
        _Options(
            flags="v",
            valued="ks",
            long_flags=frozenset({"preserve-status", "foreground", "verbose"}),
            long_valued=frozenset({"kill-after", "signal"}),
        ),
        operands_before_command=1,
    ),
    "stdbuf": _simple(_Options(valued="ioe", long_valued=frozenset({"input", "output", "error"}))),
    # `-f` forks the command away, and setsid forks by itself when it leads its process group
    "setsid": _simple(
        _Options(flags="cfw", long_flags=frozenset({"ctty", "fork", "wait"})), detaches=True
    ),
    "ionice": _opaque(
        _Options(flags="tP", valued="cnpu", long_valued=frozenset({"class", "classdata"}))
    ),
    "taskset": _opaque(
        _Options(flags="acp", long_flags=frozenset({"all-tasks", "cpu-list", "pid"})),
        operands_before_command=1,
    ),
    "chrt": _opaque(
        _Options(
            flags="abdefiorRmpv",
            valued="TPD",
            long_flags=frozenset({"all-tasks", "batch", "deadline", "fifo", "idle", "other"})
            | frozenset({"rr", "reset-on-fork", "max", "pid", "verbose"}),
            long_valued=frozenset({"sched-runtime", "sched-period", "sched-deadline"}),
        ),
        operands_before_command=1,
    ),
    "flock": _opaque(
        _Options(
            flags="sxunoFe",
            valued="wEc",
            long_flags=frozenset({"shared", "exclusive", "unlock", "nonblock", "close"})
            | frozenset({"no-fork", "verbose"}),
            long_valued=frozenset({"timeout", "conflict-exit-code", "command"}),
        ),
        operands_before_command=1,
        code="c",
        creates_operand=True,
    ),
    "setpriv": _opaque(
        _Options(
            flags="d",
            long_flags=frozenset({"no-new-privs", "clear-groups", "keep-groups", "init-groups"})
            | frozenset({"reset-env", "dump"}),
            long_valued=frozenset({"reuid", "regid", "ruid", "euid", "rgid", "egid", "groups"})
            | frozenset({"inh-caps", "ambient-caps", "bounding-set", "securebits"})
            | frozenset({"pdeathsig", "selinux-label", "apparmor-profile", "landlock-access"})
            | frozenset({"landlock-rule"}),
        )
    ),
    "script": _script,
    **{shell: _shell for shell in SHELLS},
    "setarch": _runs_a_program(_RUNS_ITS_COMMAND, operands_before_command=1),
    **dict.fromkeys(
        ("linux32", "linux64", "i386", "x86_64", "uname26", "prlimit", "fakeroot"),
        _runs_a_program(_RUNS_ITS_COMMAND),
    ),
    **dict.fromkeys(
        ("valgrind", "strace", "ltrace", "unshare", "nsenter", "chroot", "firejail", "bwrap"),
        _runs_a_program(_RUNS_ITS_COMMAND),
    ),
    "run-parts": _runs_a_program("runs every program in the folder it names"),
    "gdb": _runs_a_program("runs the commands of -ex, -x and its start-up files, shell ones too"),
}
