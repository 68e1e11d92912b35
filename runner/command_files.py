"""The files a command line names: `sh tools/post.sh` runs whatever tools/post.sh holds, so a
command an agent CLI starts by itself is only what it was at setup while the files it names
are.

Read as a shell reads a simple script, not as fully: words split at blanks and at the
operators glued to them (`tools/post.sh>/dev/null`, `(sh x.sh)`, `<x.sh`), each inner script
again (`bash -c "sh x.sh"`), an option's value after `=`; `$CLAUDE_PROJECT_DIR`, `$PWD`,
`$(pwd)` and `${VAR:-…}` as the CLIs set them; globs matched; relative to the folder the
command runs in, a plugin's own folder, and every folder the command names (`cd tools &&
sh post.sh`). A program found on PATH (the first word of a command, with no `/`), a file
written to (`>> hook.log`), a module named (`python -m tools.server`) and what a named file
goes on to load are not followed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

# Where the CLIs' hooks run: the project (`$CLAUDE_PROJECT_DIR`, Gemini CLI's
# `$GEMINI_PROJECT_DIR` and `${workspacePath}`, the working directory); a plugin's or an
# extension's own folder.
PROJECT_VARIABLES = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "workspacePath", "PWD")
PLUGIN_VARIABLES = ("CLAUDE_PLUGIN_ROOT", "extensionPath")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[:]?[-=?+][^}]*)?\}|\$([A-Za-z_]\w*)")
_WORKING_DIRECTORY = re.compile(r"\$\(\s*pwd\s*\)|`\s*pwd\s*`|^~\+(?=/|$)")
# The tokens after which the next word is a program, and those that write to the next word.
_COMMAND_STARTS = {";", "&&", "||", "|", "&", "(", ")", "{", "}", "!", "then", "do", "else"}
_COMMAND_STARTS |= {"if", "elif", "while", "until", "time", "exec", "xargs", "env", "nohup"}
_WRITES_TO = {">", ">>", ">|", "&>", "&>>", ">&"}
_GLOB = re.compile(r"[*?\[]")
GLOB_LIMIT = 64


def named_paths(
    words: list[str], cwd: Path, project: Path, root: Path | None = None
) -> Iterator[tuple[Path, str]]:
    """(path, word as written) for each word of a command (`words`: a command line, or a
    program and its arguments) that names a path, whether or not it is there; a glob's
    matches, and the glob itself (`is_glob`)."""
    found = {}
    for position, text in enumerate(words):
        for word, expanded in _path_words(text, cwd, project, root, argument=position > 0):
            found.setdefault(word, expanded)
    folders = [cwd, *([root] if root is not None else [])]
    for _ in range(3):  # `cd tools && cd sub && sh inner.sh`
        below = [f / e for f in folders for e in found.values() if e not in (".", "/", "..")]
        new = [path for path in below if path not in folders and _is_dir(path)]
        if not new:
            break
        folders += new
    for word, expanded in found.items():
        for folder in folders:
            path = folder / expanded  # an absolute word stays itself
            if _GLOB.search(expanded):
                for match in islice(_globbed(path), GLOB_LIMIT):
                    yield match, word
            yield path, word  # a glob as itself too: the files a write may yet make match it


def is_glob(path: Path | str) -> bool:
    return bool(_GLOB.search(str(path)))


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _globbed(pattern: Path) -> Iterator[Path]:
    anchor = Path(pattern.anchor)
    try:
        yield from anchor.glob(str(pattern.relative_to(anchor)))
    except (OSError, ValueError, NotImplementedError):
        return


def _path_words(
    text: str, cwd: Path, project: Path, root: Path | None, argument: bool = False
) -> Iterator[tuple[str, str]]:
    """The words of `text` that may name a path, as written and expanded; `argument`: the text
    is one argument of a program (`server.py`), unless it is a script itself (`sh x.sh`)."""
    tokens = _tokens(text)
    script = not (argument and len(tokens) == 1)
    for index, token in enumerate(tokens):
        before = tokens[index - 1] if index else None
        if before in _WRITES_TO or token in _COMMAND_STARTS or token in _WRITES_TO:
            continue
        token = _WORKING_DIRECTORY.sub(str(cwd).replace("\\", "\\\\"), token)
        if token != text and any(c in token for c in " \t\n;&|<>()"):
            yield from _path_words(token, cwd, project, root)  # `bash -c "sh x.sh"`
            continue
        at_command = before is None or before in _COMMAND_STARTS or _assignment(before)
        if script and at_command and "/" not in token and not _assignment(token):
            continue  # a program found on PATH
        for word in (token, token.partition("=")[2]) if "=" in token else (token,):
            expanded = _expanded(word, cwd, project, root)
            if expanded and not expanded.startswith("-") and "$" not in expanded:
                yield word, expanded


def _assignment(token: str | None) -> bool:
    name, equals, _ = (token or "").partition("=")
    return bool(equals) and name.isidentifier()


def _tokens(text: str) -> list[str]:
    """Words and operators, a line at a time so that a `#` comment ends where its line does
    (a `#` inside a word is the word's)."""
    try:
        return [token for line in text.splitlines() for token in _line_tokens(line)]
    except ValueError:  # a quote open across lines
        try:
            return _line_tokens(text)
        except ValueError:
            return text.split()


def _line_tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    tokens = list(lexer)
    comment = next((i for i, token in enumerate(tokens) if token.startswith("#")), None)
    return tokens[:comment]


def _expanded(word: str, cwd: Path, project: Path, root: Path | None) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1) or match.group(2)
        if name in PROJECT_VARIABLES:
            return str(cwd if name == "PWD" else project)
        if name in PLUGIN_VARIABLES and root is not None:
            return str(root)
        return str(Path.home()) if name == "HOME" else match.group(0)

    word = word.replace("${/}", "/").replace("${pathSeparator}", "/")  # Gemini CLI's
    word = _VARIABLE.sub(value, word)
    return str(Path.home()) + word[1:] if word == "~" or word.startswith("~/") else word
