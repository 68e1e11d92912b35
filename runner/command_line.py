"""Splits a command line into words the way a POSIX shell would, without ever running a shell.

Everything that only a shell could do — joining commands, pipes, redirections, substitutions,
variable expansion — is refused with a message the model can act on; a refusal here is a
second wall behind the gate's own shell-aware policy matching.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_EXPANSION_STARTS = frozenset("({_@*#?$!-") | frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)
_GLOB_CHARACTERS = frozenset("*?[")
_OPERATORS = {
    ";": "`;` runs several commands",
    "&": "`&`/`&&` runs commands in the background or in sequence",
    "|": "pipes (`|`) and `||` join several commands",
    "<": "redirections (`<`) need a shell",
    ">": "redirections (`>`) need a shell",
    "(": "subshells need a shell",
    ")": "subshells need a shell",
    "`": "command substitution (backticks) needs a shell",
    "\n": "a newline separates several commands",
    "\r": "a carriage return is not allowed in a command",
}


class CommandRefused(ValueError):
    """A command the executor will not run; the message says why, for the model to read."""


@dataclass(frozen=True)
class Word:
    """One argument after quote removal; `glob` is true when it holds an unquoted `*`, `?`, `[`."""

    text: str
    glob: bool = False


def split_command(command: str) -> list[Word]:
    """The words of one simple command; raises `CommandRefused` for anything needing a shell."""
    _refuse_invisible_characters(command)
    words: list[Word] = []
    current: list[str] = []
    in_word = glob = False
    index = 0
    while index < len(command):
        char = command[index]
        if char in " \t":
            if in_word:
                words.append(Word("".join(current), glob))
                current, in_word, glob = [], False, False
            index += 1
            continue
        if char in _OPERATORS:
            raise CommandRefused(_one_command_only(_OPERATORS[char]))
        if char == "#" and not in_word:
            raise CommandRefused("comments (`#`) are not supported; quote a literal `#`")
        if char == "~" and not in_word:
            raise CommandRefused("`~` (home directory) is not expanded; use a workspace path")
        if char == "$":
            _refuse_expansion(command, index)
        if char == "\\":
            if index + 1 == len(command):
                raise CommandRefused("the command ends with a lone backslash")
            current.append(command[index + 1])
            in_word, index = True, index + 2
            continue
        if char == "'":
            end = command.find("'", index + 1)
            if end < 0:
                raise CommandRefused("unterminated single quote")
            current.append(command[index + 1 : end])
            in_word, index = True, end + 1
            continue
        if char == '"':
            text, index = _double_quoted(command, index + 1)
            current.append(text)
            in_word = True
            continue
        glob = glob or char in _GLOB_CHARACTERS
        current.append(char)
        in_word = True
        index += 1
    if in_word:
        words.append(Word("".join(current), glob))
    if not words:
        raise CommandRefused("the command is empty")
    if _ASSIGNMENT.match(words[0].text):
        raise CommandRefused(
            "leading VAR=value assignments are not supported; the command runs with a fixed "
            "environment"
        )
    return words


def _double_quoted(command: str, index: int) -> tuple[str, int]:
    text: list[str] = []
    while index < len(command):
        char = command[index]
        if char == '"':
            return "".join(text), index + 1
        if char == "`":
            raise CommandRefused(_one_command_only(_OPERATORS["`"]))
        if char == "$":
            _refuse_expansion(command, index)
        if char == "\\" and index + 1 < len(command) and command[index + 1] in '$`"\\':
            text.append(command[index + 1])
            index += 2
            continue
        text.append(char)
        index += 1
    raise CommandRefused("unterminated double quote")


def _refuse_expansion(command: str, index: int) -> None:
    following = command[index + 1 : index + 2]
    if following and following in _EXPANSION_STARTS:
        raise CommandRefused(
            "`$` expansions (variables, `$(...)` substitution) need a shell and are not run; "
            "write the value literally, or single-quote a literal `$`"
        )


def _refuse_invisible_characters(command: str) -> None:
    for char in command:
        category = unicodedata.category(char)
        if char not in "\t\n\r" and (category in ("Cc", "Cf") or char in "\u2028\u2029"):
            raise CommandRefused(
                f"the command contains an invisible or control character (U+{ord(char):04X})"
            )


def _one_command_only(reason: str) -> str:
    return f"{reason}; the executor runs exactly one program per call, without a shell"
