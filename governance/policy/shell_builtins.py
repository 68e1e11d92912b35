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
)
DECLARATIONS = frozenset(
    {"export", "declare", "typeset", "local", "readonly", "unset", "integer", "float"}
)
_NAME_EVALUATORS = {"printf": {"-v"}, "print": {"-v"}, "test": {"-v", "-R"}, "[": {"-v", "-R"}}
_NAME_EVALUATORS["wait"] = {"-p"}
SPECIAL_BUILTINS = SHELL_STATE | DECLARATIONS | {"set"} | set(_NAME_EVALUATORS)
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


def command_concerns(base: str, arguments: list[str]) -> list[str]:
    """Why `base arguments...` keeps the script at ASK, if it is such a builtin."""
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
