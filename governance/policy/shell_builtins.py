"""Assignments and builtins that keep an exactly read command at ASK, whatever rule allows it.

Without `$` a script cannot use a variable, yet some variables change what runs on
their own (`PATH=`, `LD_PRELOAD=`, `BASH_ENV=`, `GIT_SSH_COMMAND=`, `PAGER=`): only a
short list of inert ones is let through, by plain name only (`declare 'LC_x[$(cmd)]=1'`
runs its subscript); TZ only with a value inside the zone database (bash reads the file
`TZ=/etc/passwd` names at once), LANGUAGE only with names without a `/`
(`LANGUAGE=../../../../tmp/x`: every program's messages from /tmp/x). Some builtins change
how the rest of the script is read or run (`alias`, `hash -p`, `set -k`, `source`,
`read PATH`, `export PATH=…`), and some evaluate a variable name's subscript as code
(`test -v 'a[$(cmd)]'`, `printf -v`, `let`, `read`, `declare`): their effects are outside
what the subset models, so they are concerns (ASK), not rules.
"""

import re

INERT_VARIABLES = frozenset(
    {"LANG", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR", "CLICOLOR"}
    | {"CLICOLOR_FORCE", "FORCE_COLOR", "CI", "NODE_ENV", "RUST_BACKTRACE", "RUST_LOG"}
    | {"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PYTHONIOENCODING"}
    | {"CARGO_TERM_COLOR", "GOOS", "GOARCH", "CGO_ENABLED", "DEBUG"}
)
# Builtins that change how the rest of the script runs, or evaluate their arguments as code.
SHELL_STATE = frozenset(
    {"alias", "unalias", "hash", "enable", "shopt", "setopt", "unsetopt", "emulate", "source"}
    | {".", "zmodload", "autoload", "functions", "disable", "bind", "complete", "compgen"}
    | {"compctl", "compdef", "fc", "history", "r", "sched", "zle", "vared", "bindkey"}
    | {"mapfile", "readarray", "let", "read", "getopts", "jobs", "coproc", "zcompile"}
    # zsh's: they assign to a parameter they are given by name (its subscript evaluated)
    | {"getln", "zformat", "zparseopts", "zstyle", "zregexparse", "vared", "zle"}
)
DECLARATIONS = frozenset(
    {"export", "declare", "typeset", "local", "readonly", "unset", "integer", "float"}
    | {"private"}  # zsh/param/private's `local`
)
_NAME_EVALUATORS = {"printf": {"-v"}, "print": {"-v"}, "test": {"-v", "-R"}, "[": {"-v", "-R"}}
_NAME_EVALUATORS["wait"] = {"-p"}
# zsh evaluates these words as arithmetic, where an assignment (`PATH=5`) or a subscript's
# `$(cmd)` (`path[$(cmd)]`) acts: printf's numeric arguments and `*` widths, `test -t`'s
# operand, the count of exit, return, shift, break and continue, and the integer specials
# COLUMNS and LINES (F131). bash and dash take only numbers there.
_ZSH_COUNTS = frozenset({"exit", "bye", "return", "shift", "break", "continue", "logout"})
_ZSH_ARITHMETIC = frozenset({"printf", "print", "test", "["}) | _ZSH_COUNTS
SPECIAL_BUILTINS = SHELL_STATE | DECLARATIONS | {"set"} | set(_NAME_EVALUATORS) | _ZSH_ARITHMETIC
_INTEGER_SPECIALS = frozenset({"COLUMNS", "LINES"})
_PLAIN_NUMBER = re.compile(r"\s*[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+|0[xX][0-9a-fA-F]+)\s*")
_SET_LETTERS = frozenset("euxvfaC")
_SET_OPTIONS = frozenset(
    {"pipefail", "errexit", "nounset", "xtrace", "verbose", "noglob", "allexport", "noclobber"}
)


_ZONE_DATABASE = "/usr/share/zoneinfo/"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def variable_concern(name: str, value: str | None = None) -> str | None:
    """Why assigning `value` to `name` keeps the command at ASK; None for an inert one.
    `value` None: not known (`export NAME`), the name alone decides."""
    if not _IDENTIFIER.fullmatch(name):
        # `declare 'LC_x[$(cmd)]=1'`, `unset 'LC_x[$(cmd)]'`: the subscript runs as code.
        return f"{name} is not a plain variable name: bash evaluates its subscript as code"
    if name == "TZ" and value is not None and _names_a_file_outside_the_zones(value):
        return f"TZ={value} makes the shell read that file (bash sets the time zone at once)"
    if name == "LANGUAGE" and value is not None and "/" in value:
        # gettext joins each of its names into the catalog's path, `..` and all: a program's
        # messages (its printf formats among them) come from the .mo file found there.
        return f"LANGUAGE={value} loads message catalogs from a folder it names"
    if value is not None and (value.startswith("=") or ":=" in value):
        # zsh expands `=NAME` at the start of an assignment's value and after a `:` to the
        # path of the program NAME (`TZ=:=ls` is `TZ=:/usr/bin/ls`) (F134)
        return f"zsh expands {name}={value} to a program's path"
    if name in _INTEGER_SPECIALS and value is not None and not value.isdigit():
        return f"zsh evaluates {name}={value} as arithmetic, which can run code"
    if name in INERT_VARIABLES or name.startswith("LC_"):
        return None
    return f"the assignment to {name} can change what the command runs"


def _names_a_file_outside_the_zones(value: str) -> bool:
    # glibc reads TZ (a leading `:` dropped) as a file: a relative one under the zone
    # database, through `..` too, an absolute one as it is.
    path = value.removeprefix(":")
    if ".." in path.split("/"):
        return True
    return path.startswith("/") and not path.startswith(_ZONE_DATABASE)


def command_concerns(base: str, arguments: list[str], dialect: str = "bash") -> list[str]:
    """Why `base arguments...` keeps the script at ASK, if it is such a builtin."""
    if dialect == "zsh" and base in _ZSH_ARITHMETIC and _zsh_evaluates(base, arguments):
        return [f"zsh evaluates {base}'s arguments as arithmetic, which can run code"]
    if base in SHELL_STATE:
        return [f"{base} changes how the rest of the script runs"]
    if base in DECLARATIONS:
        reasons = []
        for argument in arguments:
            if argument.startswith(("-", "+")):
                if argument not in ("-x", "-p", "--"):
                    reasons.append(f"{base} {argument} is not read")
            else:
                name, assigns, value = argument.partition("=")
                if reason := variable_concern(name, value if assigns else None):
                    reasons.append(reason)
        return reasons
    if base == "set":
        return _set_concerns(arguments)
    options = _NAME_EVALUATORS.get(base, set())
    if options & set(arguments) or (base not in ("test", "[") and _getopt_sets(arguments, options)):
        return [f"{base} evaluates a variable name, and its subscript as code"]
    return []


def _zsh_evaluates(base: str, arguments: list[str]) -> bool:
    """Whether zsh would evaluate a word here that is not a plain number."""
    if base in _ZSH_COUNTS:
        return any(not _PLAIN_NUMBER.fullmatch(word) for word in arguments)
    if base in ("test", "["):
        operands = [arguments[k + 1] for k, w in enumerate(arguments[:-1]) if w == "-t"]
        return any(not operand.strip().isdigit() for operand in operands)
    words = list(arguments)
    if base == "print":  # `print -f FORMAT`: printf's reading, options and all
        return any(w.startswith("-") and "f" in w for w in words)
    while words and words[0].startswith("-") and words[0] != "-":
        if words.pop(0) == "--":
            break
    if len(words) < 2 or _only_strings(words[0]):
        return False
    numeric = _numeric_slots(words[0])
    values = words[1:]
    if numeric is None:  # a conversion or an escape the slots below do not model
        return any(not _PLAIN_NUMBER.fullmatch(value) for value in values)
    if not any(numeric):
        return False
    return any(
        numeric[k % len(numeric)] and not _PLAIN_NUMBER.fullmatch(value)
        for k, value in enumerate(values)
    )


def _numeric_slots(format_text: str) -> list[bool] | None:
    """For each argument the format takes in turn, whether zsh reads it as a number (a
    numeric conversion or a `*`); None when the format holds what this does not model: a
    numeric escape (`\x25`), a length modifier, `%n`, a positional argument."""
    if re.search(r"\\[xuU0-7%]", format_text):
        return None
    slots: list[bool] = []
    for conversion in re.findall(r"%[^a-zA-Z%]*.?", format_text):
        known = _KNOWN_CONVERSION.fullmatch(conversion)
        if known is None:
            return None
        if conversion != "%%":
            width, precision, letter = known.groups()
            slots += [True] * ((width == "*") + (precision == "*"))
            slots.append(letter not in "sbqc")
    return slots


def _only_strings(format_text: str) -> bool:
    """Whether every conversion of a printf format, its escapes decoded as zsh decodes them
    first (`%\x64` is `%d`), takes a string: `%s`, `%b`, `%c`, `%q` with flags and widths
    but no `*`, `$`, length modifier or `%n` (each of those reads a number, or assigns)."""
    decoded = _ESCAPE.sub(_decoded, format_text)
    conversions = re.findall(r"%[^a-zA-Z%]*.?", decoded)
    return all(c == "%%" or _STRING_CONVERSION.fullmatch(c) for c in conversions)


_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|0?[0-7]{1,3}|.)")
_STRING_CONVERSION = re.compile(r"%[-+ #0]*\d*(?:\.\d*)?[sbcq]")
_KNOWN_CONVERSION = re.compile(r"%%|%[-+ #0]*(\*|\d*)(?:\.(\*|\d*))?([diouxXeEfFgGaAsbqc])")


def _decoded(escape: re.Match) -> str:
    code = escape.group(1)
    try:
        if code[0] in "xuU":
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8))
    except ValueError:
        return "%?"  # not decodable: read as an unknown conversion
    return code


def _set_concerns(arguments: list[str]) -> list[str]:
    reasons, k = [], 0
    while k < len(arguments):
        argument = arguments[k]
        if argument == "--" or not argument.startswith(("-", "+")):
            break
        for letter in argument[1:]:
            if letter == "o":
                k += 1
                if k >= len(arguments) or arguments[k] not in _SET_OPTIONS:
                    reasons.append("set -o with an option that changes how scripts run")
            elif letter not in _SET_LETTERS:
                reasons.append(f"set {argument[0]}{letter} changes how scripts run")
        k += 1
    return reasons


def _getopt_sets(arguments: list[str], options: set[str]) -> bool:
    """Whether builtin getopt reads one of `options` (`-x`) from the leading options, also
    inside a cluster or with its value glued: bash's `printf -vNAME` is `printf -v NAME`."""
    letters = {option[1] for option in options}
    for argument in arguments:
        if argument == "--" or not argument.startswith("-") or argument == "-":
            return False
        if letters & set(argument[1:]):
            return True
    return False
