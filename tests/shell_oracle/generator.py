"""A grammar of shell scripts for the oracle: hypothesis strategies.

A script is one to four commands joined by the list and pipe operators; a command is
an optional wrapper, a program the review's policy admits (mostly) or not, a few
arguments and a few redirections. Every word is built from parts written in one of
the quoting forms (globs among them: `*.py`, `src/*`), a command sometimes behind
`time` or xargs, and now and then a part is a *trick*: something near or outside
the subset the engine reads exactly (expansions, substitutions, ANSI-C and locale
quotes, backslash-newlines, control bytes, comments, globs, braces, tildes, here-
documents, other file descriptors, `/dev/tcp`, nested `sh -c`). Payloads are the
sandbox's harmless markers: `touch /workspace/PWNED`, `rm -rf /workspace/victim`, a
write to /etc.

The draw is biased toward scripts the engine might allow — admitted programs, plain
words, redirections into /workspace — because only those can disagree: the oracle
runs a script in the real shell only when the engine said ALWAYS.
"""

import random
import shlex
from collections.abc import Sequence
from typing import Protocol

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

PAYLOADS = ("touch /workspace/PWNED", "rm -rf /workspace/victim", "echo x > /etc/fluidbox-x")
ADMITTED = (
    "ls",
    "ls -la",
    "cat",
    "echo",
    "grep -n",
    "grep -r",
    "find",
    "git status",
    "git log",
    "git log --oneline",
)
# Admitted too, but a second of Python start-up in the sandbox: drawn less often.
SLOW_ADMITTED = "python -m pytest -q"
OTHERS = ("touch", "rm -rf", "wc -l", "head -1", "sort", "true", "printf %s", "sed -n 1p")
WRAPPERS = ("env ", "timeout 5 ", "nice ", "command ", "nohup ", "exec ", "\\", "builtin ")
# Prefixes whose command the engine may allow: `time` (bash's keyword, dash's
# /usr/bin/time) and xargs, which appends the words of its input (fed by a pipe).
OPEN_PREFIXES = ("time ", "xargs ", "xargs -n1 ", "xargs -0 ", "xargs -r ")
ARGUMENTS = (
    "-la",
    "-n",
    "-1",
    "-q",
    "--",
    "alpha",
    "x",
    "a b",
    "/workspace",
    "/workspace/src",
    "/workspace/notes.txt",
    "README.md",
    "notes.txt",
    "src",
    "tests",
    "victim",
    "-name",
    "*.py",
    "src/*",
    "*",
    "?otes.txt",
    "-*",
    "--oneline",
    "/etc/hostname",
    "-maxdepth",
    "0",
)
ACTING = (
    "-delete",
    "-fprint /etc/fluidbox-x",
    "-exec touch /workspace/PWNED ;",
    "--output=/etc/fluidbox-x",
    "--basetemp=/home/x",
    "-o cache_dir=/etc/fluidbox-x",
)
TARGETS = (
    "/workspace/out",
    "/workspace/src/x",
    "/workspace/out.txt",
    "/workspace/a.log",
    "/dev/null",
    "out.txt",
    "/workspace/../etc/fluidbox-x",
    "/etc/fluidbox-x",
)
SOURCES = ("/workspace/notes.txt", "notes.txt", "/etc/hostname", "/dev/null")
OPERATORS = (" ; ", ";", " && ", "&&", " || ", " | ", "|", "\n", " ;\n")
ODD_OPERATORS = (" & ", " |& ", "\r\n", " ;; ", "\n\n", " &&\n", " | \\\n")
# Bytes and characters that are not what they look like.
ODD_CHARACTERS = ("\t", "\r", "\x01", "\x1b", "\x7f", "\0", "\u00a0", "\u200b", "\uff1b", "é")


def _payload_tricks(payload: str) -> list[str]:
    return [
        f"$({payload})",
        f"`{payload}`",
        f'"$({payload})"',
        f"'$({payload})'",
        f"\"'$({payload})'\"",
        f"${{x:-$({payload})}}",
        f"\"${{x:-'$({payload})'}}\"",
        f"${{x:-$'\\'' $({payload}) \\'}}",
        f"$\\\n({payload})",
        f'"$\\\n({payload})"',
        f"<({payload})",
        f">({payload})",
        f"$(({payload}))",
        f"a[$({payload})]",
        f"'a[$({payload})]'",
        f"$'\\' ; {payload} ; #'",
        f"${{(e):-'$({payload})'}}",
        f"\\\n; {payload}",
        f"# \\\n{payload}",
    ]


TRICKS = (
    "$x",
    "${x}",
    "${x:-y}",
    "$HOME",
    "$PATH",
    "$1",
    "$@",
    "$$",
    "$?",
    "$((1+1))",
    "$'\\x41'",
    "$'\\''",
    "$'a\\0b'",
    '$"x"',
    "\\",
    "\\ ",
    "\\\n",
    "\\;",
    "\\$",
    "'\\''",
    "#",
    " #c",
    "~",
    "~root",
    "*",
    "?",
    "[a]",
    "{a,b}",
    "!",
    "=ls",
    "&",
    "(",
    ")",
    "{",
    "}",
    ";;",
    "<<<x",
    "<<E\nbody\nE\n",
    "<<'E'\n$(x)\nE\n",
    "3>/workspace/x",
    "3</etc/hostname",
    ">&3",
    "/dev/tcp/127.0.0.1/9",
    "2>&-",
    "PATH=/workspace/bin",
    "X=1",
    "BASH_ENV=/workspace/bin/ls",
    "for PATH in /workspace/bin; do",
    "done",
    "f() { ls; }",
)


class Choices(Protocol):
    """Where the grammar's choices come from: hypothesis (shrinkable) or a seeded Random."""

    def pick(self, options: Sequence[str]) -> str: ...

    def number(self, low: int, high: int) -> int: ...


class DrawnChoices:
    def __init__(self, draw):
        self.draw = draw

    def pick(self, options: Sequence[str]) -> str:
        return self.draw(st.sampled_from(options))

    def number(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))


class SeededChoices:
    """The same grammar at the speed of `random` (the bench draws 10^5 scripts)."""

    def __init__(self, seed: int):
        self.random = random.Random(seed)

    def pick(self, options: Sequence[str]) -> str:
        return options[self.random.randrange(len(options))]

    def number(self, low: int, high: int) -> int:
        return self.random.randint(low, high)


def _part(c: Choices, tricky: bool) -> str:
    """One piece of a word, in one of the quoting forms; sometimes a trick."""
    if tricky and c.number(0, 4) == 0:
        if c.number(0, 1):
            return c.pick(TRICKS)
        return c.pick(_payload_tricks(c.pick(PAYLOADS)))
    text = c.pick(ARGUMENTS)
    if tricky and c.number(0, 6) == 0:
        at = c.number(0, len(text))
        text = text[:at] + c.pick(ODD_CHARACTERS) + text[at:]
    form = c.number(0, 9)
    if form <= 4 and " " not in text:
        return text
    if form <= 6:
        return "'" + text.replace("'", "") + "'"
    if form <= 8:
        return '"' + text + '"'
    return "".join("\\" + char if char in " *?" else char for char in text)


def _word(c: Choices, tricky: bool) -> str:
    return "".join(_part(c, tricky) for _ in range(c.number(1, 2)))


def _redirection(c: Choices, tricky: bool) -> str:
    kind = c.number(0, 9)
    if kind <= 4:
        return f"{c.pick(('>', '>>', '2>', '1>'))}{c.pick(('', ' '))}{c.pick(TARGETS)}"
    if kind <= 6:
        return c.pick(("2>&1", ">&2", "2>/dev/null", "1>&2"))
    if kind <= 8 or not tricky:
        return f"{c.pick(('<', '0<'))} {c.pick(SOURCES)}"
    if c.number(0, 1):
        return f"{c.pick(('&>', '>|', '<>', '&>>', '>&'))} {c.pick(TARGETS)}"
    return c.pick(TRICKS[-14:] + ("0<&0", "2>&-", ">&-"))


def _command(c: Choices, tricky: bool, depth: int) -> str:
    if depth < 2 and tricky and c.number(0, 9) == 0:
        inner = build_script(c, depth + 1)
        return f"{c.pick(('sh', 'bash', 'dash'))} -c {shlex.quote(inner)}"
    if c.number(0, 39) == 0:
        program = SLOW_ADMITTED
    else:
        program = c.pick(ADMITTED if c.number(0, 7) else OTHERS)
    if tricky and c.number(0, 7) == 0:
        program = c.pick(WRAPPERS) + program
    elif c.number(0, 9) == 0:
        program = c.pick(OPEN_PREFIXES) + program
    words = [program] + [_word(c, tricky) for _ in range(c.number(0, 3))]
    if c.number(0, 11) == 0:
        words.append(c.pick(ACTING))
    for _ in range(c.number(0, 2)):
        redirection = _redirection(c, tricky)
        words.insert(c.number(1 if c.number(0, 5) else 0, len(words)), redirection)
    return " ".join(words)


def build_script(c: Choices, depth: int = 0) -> str:
    tricky = c.number(0, 1) > 0
    script = _command(c, tricky, depth)
    for _ in range(c.number(0, 3)):
        odd = tricky and c.number(0, 5) == 0
        script += c.pick(ODD_OPERATORS if odd else OPERATORS) + _command(c, tricky, depth)
    endings = ("", "", "", "\n", ";", " # done") + ((" &", "\\", "\r") if tricky else ())
    return script + c.pick(endings)


@st.composite
def _drawn_script(draw) -> str:
    return build_script(DrawnChoices(draw))


def scripts() -> st.SearchStrategy[str]:
    """Scripts near the subset, with harmless marker payloads."""
    return _drawn_script()


def cases(shells: tuple[str, ...] = ("bash", "sh")) -> st.SearchStrategy[tuple[str, str]]:
    """(script, shell) pairs for the oracle."""
    return st.tuples(scripts(), st.sampled_from(shells))


def seeded_cases(seed: int, count: int, shells: tuple[str, ...] = ("bash", "sh")):
    """`count` (script, shell) pairs from the same grammar, reproducible from `seed`."""
    choices = SeededChoices(seed)
    for _ in range(count):
        yield build_script(choices), choices.pick(shells)


def seeded_draws(strategy: st.SearchStrategy, count: int, seeded: int) -> list:
    """`count` draws of `strategy` from the seed `seeded`, the same ones every run (CI sees
    what a developer saw), without repeats: the suite then runs them in the sandbox in one
    batch, not one by one."""
    drawn: list = []

    @seed(seeded)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def draw(case):
        drawn.append(case)

    draw()
    return list(dict.fromkeys(drawn))
