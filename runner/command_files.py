"""The files a command line names: `sh tools/post.sh` runs whatever tools/post.sh holds, so a
command an agent CLI starts by itself is only what it was at setup while the files it names
are.

Read as a shell reads a simple script, not as fully: words split at blanks and at the
operators glued to them (`tools/post.sh>/dev/null`, `(sh x.sh)`, `<x.sh`), each inner script
again (`bash -c "sh x.sh"`), an option's value after `=`; `$CLAUDE_PROJECT_DIR`, `$PWD`,
`$(pwd)` and `${VAR:-…}` as the CLIs set them; globs matched; relative to the folder the
command runs in, a plugin's own folder, and every folder the command names (`cd tools &&
sh post.sh`). A program found on PATH (the first word of a command, with no `/`), a file
written to (`>> hook.log`), what a program that only prints, searches or formats is given
(`ruff format src/app.py`, unless its output is piped into a shell), a module named (`python
-m tools.server`) and what a named file goes on to load are not followed.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

# Where the CLIs' hooks run: the project (`$CLAUDE_PROJECT_DIR`, Gemini CLI's
# `$GEMINI_PROJECT_DIR` and `${workspacePath}`, the working directory); a plugin's or an
# extension's own folder.
PROJECT_VARIABLES = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "workspacePath", "PWD")
PLUGIN_VARIABLES = ("CLAUDE_PLUGIN_ROOT", "extensionPath")
_VARIABLE = re.compile(
    r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*)|:?[=?+][^}]*)?\}|\$([A-Za-z_]\w*)"
)
_WORKING_DIRECTORY = re.compile(r"^~\+(?=/|$)")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
UNKNOWN = "__fluidbox_unknown__"
# The tokens after which the next word is a program, and those that write to the next word.
_COMMAND_STARTS = {";", "&&", "||", "|", "&", "(", ")", "{", "}", "!", "then", "do", "else"}
_COMMAND_STARTS |= {"if", "elif", "while", "until", "time", "exec", "xargs", "env", "nohup"}
_WRITES_TO = {">", ">>", ">|", "&>", "&>>", ">&"}
# Programs whose plain operands are text they print or files they format, check or record, never
# code they run (a formatter hook's `ruff format src/app.py`, a log's `tee -a hook.log`):
# holding those would deny the agent's edits of the project's own files. An option's value
# is still read (`prettier --plugin=./tools/p.js`, `eslint -c tools/eslint.config.js`), and
# an operand that is a script itself (`echo "sh tools/x.sh" > /tmp/r`). Programs that print
# a file's content (`cat`, `jq`) or run others (`git -c core.hooksPath=…`) are not here.
FORMATTERS = frozenset(
    {"ruff", "black", "isort", "prettier", "eslint", "gofmt", "goimports", "rustfmt"}
    | {"clang-format", "shfmt", "biome", "dprint", "stylua", "mypy", "pyright", "flake8"}
    | {"pylint", "yamllint", "markdownlint", "shellcheck", "hadolint", "actionlint"}
    | {"codespell", "cspell", "stylelint"}
)
# Their options that take no value: the word after one is a file to format.
_FORMATTER_FLAGS = frozenset({"--write", "-w", "--fix", "--check", "--diff", "-l", "-q", "-i"})
DATA_PROGRAMS = FORMATTERS | {"echo", "printf", "tee", "touch", "mkdir", "wc", "ls", "stat"}
DATA_PROGRAMS |= {"date", "logger", "say", "notify-send", "test", "["}
# ... unless what they print is piped into a program that runs it (`echo x.sh | xargs sh`).
RUNS_ITS_INPUT = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python3", "node", "perl", "ruby"}
    | {"php", "source", ".", "eval"}
)
# What runs the program after it (`| timeout 9 sh`): read past it to that program.
_RUNS_THE_NEXT = frozenset({"xargs", "env", "timeout", "nice", "nohup", "command", "exec"})
# The words before a folder the command, or the program it runs, works in.
_GOES_INTO = frozenset({"cd", "pushd", "-C", "--cwd", "--directory", "--prefix"})
_GLOB = re.compile(r"[*?\[]")
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
# A word that starts with what only running the command would tell (`$(git rev-parse
# --show-toplevel)/tools/x.sh`, `$HOOKS/x.sh`): its rest is read from the folders.
_UNKNOWN_PREFIX = re.compile(rf"^(?:{UNKNOWN}|\$\{{?\w+\}}?)+/")
GLOB_LIMIT = 64


@dataclass(frozen=True)
class NamedPath:
    path: Path
    word: str  # as written
    pattern: bool = False  # a glob, its folder escaped: the files a write may yet make match it


def named_paths(
    words: list[str], folders: list[Path], project: Path, root: Path | None = None
) -> Iterator[NamedPath]:
    """Each path a command names (`words`: a command line, or a program and its arguments),
    there or not, read from each of `folders` (where it may run: the first one's is where
    `$PWD` is), from a plugin's `root`, and from the folders the command goes into."""
    cwd = folders[0]
    found: dict[str, str] = {}
    into: set[str] = set()
    for position, text in enumerate(words):
        for word, expanded, after_cd in _path_words(text, cwd, project, root, position > 0):
            found.setdefault(word, expanded)
            into |= {expanded} if after_cd else set()
    folders = list(dict.fromkeys([*folders, *([root] if root is not None else [])]))
    for _ in range(3):  # `cd tools && cd sub && sh inner.sh`
        below = [f / e for f in folders for e in into if e not in (".", "/", "..")]
        new = [p for p in below if p not in folders]
        if not new:
            break
        folders += new
    for word, expanded in found.items():
        for spelled in _braced(expanded):
            for folder in folders:
                path = folder / spelled  # an absolute word stays itself
                if not _GLOB.search(spelled):
                    yield NamedPath(path, word)
                    continue
                for match in islice(_globbed(folder, spelled), GLOB_LIMIT):
                    yield NamedPath(match, word)
                escaped = Path(glob.escape(os.path.realpath(folder))) / spelled
                yield NamedPath(escaped if not spelled.startswith("/") else path, word, True)


def _braced(word: str) -> list[str]:
    """`tools/{post,lint}.sh` as the shell expands it (commas only, up to 64 words)."""
    spelled = [word]
    for _ in range(8):
        expanded = []
        for text in spelled:
            match = _BRACES.search(text)
            if not match:
                expanded.append(text)
                continue
            head, tail = text[: match.start()], text[match.end() :]
            expanded += [head + choice + tail for choice in match.group(1).split(",")]
        if expanded == spelled:
            break
        spelled = expanded[:GLOB_LIMIT]
    return spelled


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _globbed(folder: Path, pattern: str) -> Iterator[Path]:
    """The matches of `pattern` in `folder` (the folder's own name taken as it is)."""
    try:
        if pattern.startswith("/"):
            yield from Path("/").glob(pattern.lstrip("/"))
        else:
            yield from folder.glob(pattern)
    except (OSError, ValueError, NotImplementedError):
        return


def _path_words(
    text: str,
    cwd: Path,
    project: Path,
    root: Path | None,
    argument: bool = False,
    output_runs: bool = False,
) -> Iterator[tuple[str, str, bool]]:
    """The words of `text` that may name a path: as written, expanded, and whether a `cd`
    goes into it; `argument`: the text is one argument of a program (`server.py`), unless it
    is a script itself (`sh x.sh`); `output_runs`: what it prints may be run (`$(…)`)."""
    for inner in _substitutions(text):  # `sh "$(ls tools/*.sh)"`: its own words too
        yield from _path_words(inner, cwd, project, root, output_runs=True)
    tokens = _tokens(text)
    script = not (argument and len(tokens) == 1)
    pipes_into_code = any(
        token in ("|", "|&") and _runs_its_input(tokens[index + 1 :])
        for index, token in enumerate(tokens)
    )
    data = DATA_PROGRAMS if script and not (pipes_into_code or output_runs) else frozenset()
    program = None
    for index, token in enumerate(tokens):
        before = tokens[index - 1] if index else None
        if before in _WRITES_TO or token in _COMMAND_STARTS or token in _WRITES_TO:
            continue
        if token != text and any(c in token for c in " \t\n;&|<>()"):
            yield from _path_words(token, cwd, project, root)  # `bash -c "sh x.sh"`
            continue
        at_command = before is None or before in _COMMAND_STARTS or _assignment(before)
        operand = not (at_command or token.startswith("-") or _assignment(token))
        option_value = (
            program in FORMATTERS
            and (before or "").startswith("-")
            and before not in _FORMATTER_FLAGS
        )
        if operand and program in data and not option_value:
            continue
        if script and at_command and not _assignment(token):
            program = token.rsplit("/", 1)[-1]
            if "/" not in token:
                continue  # a program found on PATH
        for word in (token, token.partition("=")[2]) if "=" in token else (token,):
            expanded = _expanded(word, cwd, project, root)
            if "$" in expanded or UNKNOWN in expanded:
                expanded = _UNKNOWN_PREFIX.sub("", expanded)
            known = expanded and "$" not in expanded and UNKNOWN not in expanded
            if known and not expanded.startswith("-"):
                yield word, expanded, before in _GOES_INTO


def _runs_its_input(command: list[str]) -> bool:
    """Whether a command runs what it reads (`sh`, `xargs -0 bash`, `(sh)`, `$SHELL`), not a
    script it names (`python3 tools/x.py` reads its input as data)."""
    for index, word in enumerate(command):
        name = word.rsplit("/", 1)[-1]
        if name in RUNS_ITS_INPUT or word.startswith("$"):
            rest = command[index + 1 :]
            until = next((i for i, w in enumerate(rest) if w in _COMMAND_STARTS), len(rest))
            names_a_script = any(not w.startswith("-") for w in rest[:until])
            return name in ("source", ".", "eval") or not names_a_script
        if not (
            word.startswith("-")
            or word[:1].isdigit()
            or word in ("(", "{", ";")
            or name in _RUNS_THE_NEXT
            or _assignment(word)
        ):
            return False
    return False


def _assignment(token: str | None) -> bool:
    name, equals, _ = (token or "").partition("=")
    return bool(equals) and name.isidentifier()


def _tokens(text: str) -> list[str]:
    """Words and operators, a line at a time so that a `#` comment ends where its line does
    (a `#` inside a word is the word's)."""
    text = text.replace("\\\n", "")  # a line continuation
    try:
        tokens: list[str] = []
        for line in text.splitlines():
            # a new line ends a command, unless the line before ended in a pipe or `&&`
            if tokens and tokens[-1] not in ("|", "|&", "&&", "||", ";"):
                tokens.append(";")
            tokens += _line_tokens(line)
        return tokens
    except ValueError:  # a quote open across lines
        try:
            return _line_tokens(text)
        except ValueError:
            return text.split()


def _line_tokens(line: str) -> list[str]:
    """A line's tokens, a command substitution in it as one word: `$PWD` for `$(pwd)`,
    otherwise one that only running it would tell (its own words are read as a script of
    their own)."""
    line = _SUBSTITUTION.sub(_substituted, _without_comment(line))
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def _without_comment(line: str) -> str:
    """The line up to a `#` that starts a word outside quotes, where bash's comment starts."""
    quote, escaped = None, False
    for index, char in enumerate(line):
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t;&|()<>"):
            return line[:index]
    return line


def _substituted(match: re.Match) -> str:
    inner = match.group(1) if match.group(1) is not None else match.group(2)
    return "$PWD" if inner.strip() == "pwd" else UNKNOWN


def _substitutions(text: str) -> list[str]:
    return [a if a is not None else b for a, b in _SUBSTITUTION.findall(text)]


def _expanded(word: str, cwd: Path, project: Path, root: Path | None) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1) or match.group(4)
        if name in PROJECT_VARIABLES:
            return str(cwd if name == "PWD" else project)
        if name in PLUGIN_VARIABLES and root is not None:
            return str(root)
        if name == "HOME":
            return str(Path.home())
        # `${TOOLS:-./tools}`: a variable the CLI does not set takes its default
        return match.group(3) if match.group(2) else match.group(0)

    word = word.replace("${/}", "/").replace("${pathSeparator}", "/")  # Gemini CLI's
    word = _WORKING_DIRECTORY.sub(str(cwd).replace("\\", "\\\\"), word)  # bash's `~+`
    word = _VARIABLE.sub(value, word)
    return str(Path.home()) + word[1:] if word == "~" or word.startswith("~/") else word
