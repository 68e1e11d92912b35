"""Programs that run another program: how to find the command they wrap.

Each unwrapper receives the wrapper's arguments (and the command's standard
input, for shells fed a here-document) and returns what it will run, or None when
it runs nothing else (`env` alone, `command -v x`, `bash script.sh`): the command
is then matched as itself. An option it does not know makes the call ASK rather
than guessing where the wrapped command starts.

Transparent wrappers change nothing about what the inner command may do (`nice`,
`nohup`, `time`, `timeout`, `env`, `command`, `builtin`, `exec`, `stdbuf`,
`setsid`, `busybox`, `sh -c`...): the inner command alone decides an ALWAYS. The
others (`sudo`, `xargs`, `eval`) add power or hidden arguments, so the wrapper form
must be allowed too.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from governance.policy.shell_syntax import StdinText, Word

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"})


@dataclass
class Script:
    text: str
    literal: bool


@dataclass
class Unwrapped:
    words: list[Word] = field(default_factory=list)
    transparent: bool = True
    assignments: list[Word] = field(default_factory=list)
    script: Script | None = None
    concern: str | None = None
    writes: list[Word] = field(default_factory=list)


@dataclass(frozen=True)
class _Options:
    flags: str = ""
    valued: str = ""
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()


class _UnknownOption(Exception):
    pass


def _skip_options(
    program: str, args: list[Word], spec: _Options, taken: dict[str, str] | None = None
) -> int:
    """Index of the first operand after `program`'s options; values land in `taken`."""
    k = 0
    while k < len(args):
        word = args[k]
        text = word.text
        if not text.startswith("-") or text == "-":
            return k
        if not word.literal:
            raise _UnknownOption(f"{program} has options computed at run time")
        if text == "--":
            return k + 1
        if text.startswith("--"):
            name, has_value, value = text[2:].partition("=")
            if name in spec.long_valued:
                if not has_value:
                    k += 1
                    value = args[k].text if k < len(args) else ""
                if taken is not None:
                    taken[name] = value
            elif name not in spec.long_flags:
                raise _UnknownOption(f"{program}: unrecognised option {text!r}")
            k += 1
            continue
        for position, letter in enumerate(text[1:], start=1):
            if letter in spec.valued:
                value = text[position + 1 :]
                if not value:
                    k += 1
                    value = args[k].text if k < len(args) else ""
                if taken is not None:
                    taken[letter] = value
                break
            if letter not in spec.flags:
                raise _UnknownOption(f"{program}: unrecognised option {'-' + letter!r}")
        k += 1
    return k


def _leading_assignments(args: list[Word]) -> int:
    k = 0
    while k < len(args) and _ASSIGNMENT.match(args[k].text):
        k += 1
    return k


def _guarded(unwrap: Callable[..., Unwrapped | None]) -> Callable[..., Unwrapped | None]:
    def run(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
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
def _env(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
    taken: dict[str, str] = {}
    k = 0
    while True:
        k += _skip_options(program, args[k:], _ENV, taken)
        if k < len(args) and args[k].text == "-":
            k += 1
            continue
        break
    assignments = _leading_assignments(args[k:])
    words = args[k + assignments :]
    split = taken.get("S", taken.get("split-string"))
    if split is not None:
        rest = " ".join(w.text for w in words)
        return Unwrapped(
            script=Script(f"{split} {rest}".strip(), all(w.literal for w in words)),
            assignments=args[k : k + assignments],
            concern="env -S splits a string into a command",
        )
    if not words:
        return None
    return Unwrapped(words=words, assignments=args[k : k + assignments])


_SUDO = _Options(
    flags="AbBEeHiKklNnPSsVv",
    valued="ugCDhprtTUc",
    long_flags=frozenset(
        {"askpass", "background", "bell", "preserve-env", "set-home", "login", "no-update"}
        | {"remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups"}
        | {"stdin", "shell", "validate", "version", "help", "edit"}
    ),
    long_valued=frozenset(
        {"user", "group", "close-from", "chdir", "host", "prompt", "role", "type"}
        | {"command-timeout", "other-user", "login-class"}
    ),
)


@_guarded
def _sudo(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
    k = _skip_options(program, args, _SUDO)
    if any(_sets_flag(word.text, "e", "edit", _SUDO) for word in args[:k]):
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
def _xargs(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
    k = _skip_options(program, _attached_optional(args, "eil"), _XARGS)
    words = args[k:]
    if not words:
        words = [Word("echo", "echo", literal=True, has_glob=False, quoted=False)]
    return Unwrapped(words=words, transparent=False)


def _attached_optional(args: list[Word], letters: str) -> list[Word]:
    """xargs' -e/-i/-l take an optional value glued to them: treat the whole word as a flag."""
    out = []
    for word in args:
        if len(word.text) > 2 and word.text[0] == "-" and word.text[1] in letters:
            word = Word(word.text[:2], word.source, word.literal, word.has_glob, word.quoted)
        out.append(word)
    return out


def _simple(spec: _Options, operands_before_command: int = 0):
    @_guarded
    def unwrap(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
        k = _skip_options(program, args, spec) + operands_before_command
        return Unwrapped(words=args[k:]) if args[k:] else None

    return unwrap


_TIME = _Options(
    flags="apqv",
    valued="fo",
    long_flags=frozenset({"append", "portability", "quiet", "verbose"}),
    long_valued=frozenset({"format", "output"}),
)


@_guarded
def _time(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
    taken: dict[str, str] = {}
    k = _skip_options(program, args, _TIME, taken)
    words = args[k:]
    output = taken.get("o", taken.get("output"))
    writes = [Word(output, output, True, False, False)] if output else []
    if not words:
        return Unwrapped(writes=writes) if writes else None
    return Unwrapped(words=words, writes=writes)


@_guarded
def _nice(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
    if args and re.fullmatch(r"-\d+", args[0].text):
        args = args[1:]
    k = _skip_options(program, args, _Options(valued="n", long_valued=frozenset({"adjustment"})))
    return Unwrapped(words=args[k:]) if args[k:] else None


@_guarded
def _command(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
    spec = _Options(flags="pvV")
    k = _skip_options(program, args, spec)
    if any(
        _sets_flag(w.text, "v", "", spec) or _sets_flag(w.text, "V", "", spec) for w in args[:k]
    ):
        return None  # a lookup, not a run
    return Unwrapped(words=args[k:]) if args[k:] else None


def _rest(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
    return Unwrapped(words=args) if args else None


@_guarded
def _shell(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
    k = 0
    runs_string = reads_stdin = False
    while k < len(args):
        word, text = args[k], args[k].text
        if not word.literal:
            raise _UnknownOption(f"{program} has options computed at run time")
        if text in ("--", "-"):
            k += 1
            break
        if text in ("--rcfile", "--init-file"):
            k += 2
            continue
        if text.startswith("--"):
            k += 1
            continue
        if len(text) > 1 and text[0] in "-+":
            letters = text[1:]
            runs_string = runs_string or (text[0] == "-" and "c" in letters)
            reads_stdin = reads_stdin or "s" in letters
            k += 2 if ("o" in letters or "O" in letters) else 1
            continue
        break
    operands = args[k:]
    if runs_string:
        if not operands:
            return None
        return Unwrapped(script=Script(operands[0].text, operands[0].literal))
    if operands and not reads_stdin:
        return None
    if stdin:
        return Unwrapped(script=Script(stdin[-1].text, stdin[-1].literal))
    return None


def _eval(program: str, args: list[Word], stdin: list[StdinText]) -> Unwrapped | None:
    if not args:
        return None
    return Unwrapped(
        script=Script(" ".join(w.text for w in args), all(w.literal for w in args)),
        transparent=False,
        concern="eval runs its arguments as a new command",
    )


WRAPPERS: dict[str, Callable[[str, list[Word], list[StdinText]], Unwrapped | None]] = {
    "env": _env,
    "sudo": _sudo,
    "xargs": _xargs,
    "time": _time,
    "nice": _nice,
    "command": _command,
    "builtin": _rest,
    "busybox": _rest,
    "eval": _eval,
    "nohup": _simple(_Options(long_flags=frozenset())),
    "exec": _simple(_Options(flags="cl", valued="a")),
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
    "setsid": _simple(_Options(flags="cfw", long_flags=frozenset({"ctty", "fork", "wait"}))),
    **{shell: _shell for shell in SHELLS},
}
