"""Per-program guards: options and subcommands that would let an allowed program run others."""

from __future__ import annotations

from pathlib import Path

from runner.command_line import CommandRefused

_FIND_REFUSED_OPTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_GIT_REFUSED_OPTIONS = frozenset(
    {"-c", "--config-env", "--exec-path", "--upload-pack", "--receive-pack", "--exec"}
)
# Subcommands outside this list (config, aliases, submodule foreach, bisect run, difftool…)
# can run arbitrary programs.
GIT_SUBCOMMANDS = frozenset(
    [
        "add",
        "blame",
        "branch",
        "checkout",
        "cherry-pick",
        "clean",
        "clone",
        "commit",
        "describe",
        "diff",
        "fetch",
        "grep",
        "init",
        "log",
        "ls-files",
        "merge",
        "mv",
        "pull",
        "push",
        "remote",
        "reset",
        "restore",
        "rev-parse",
        "revert",
        "rm",
        "shortlog",
        "show",
        "stash",
        "status",
        "switch",
        "tag",
    ]
)
_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})
# Config the repository cannot override, given to git through the environment.
_GIT_HARDENING = {
    "core.hooksPath": "/dev/null",
    "core.fsmonitor": "false",
    "core.pager": "cat",
    "core.editor": "true",
    "sequence.editor": "true",
    "credential.helper": "",
    "protocol.ext.allow": "never",
}


def check_program_arguments(program: str, arguments: list[str]) -> None:
    """Raise `CommandRefused` when the arguments would make `program` run another program."""
    if program == "find":
        _refuse_options(program, arguments, _FIND_REFUSED_OPTIONS)
    if program == "git":
        _check_git(arguments)


def program_environment(program: str, workspace_root: Path) -> dict[str, str]:
    """Extra environment a program needs to stay inside its guards."""
    return _git_environment(workspace_root) if program == "git" else {}


def _check_git(arguments: list[str]) -> None:
    _refuse_options("git", arguments, _GIT_REFUSED_OPTIONS)
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if argument in _GIT_OPTIONS_WITH_VALUE:
            index += 2
            continue
        if argument.startswith("-"):
            index += 1
            continue
        if argument not in GIT_SUBCOMMANDS:
            raise CommandRefused(
                f"`git {argument}` is not available here (allowed: "
                f"{', '.join(sorted(GIT_SUBCOMMANDS))})"
            )
        if argument == "clone" and "-u" in arguments[index + 1 :]:
            raise CommandRefused("`git clone -u` (a custom upload-pack program) is refused")
        return


def _refuse_options(program: str, arguments: list[str], refused: frozenset[str]) -> None:
    for argument in arguments:
        if argument.split("=", 1)[0] in refused:
            raise CommandRefused(
                f"`{program} {argument.split('=', 1)[0]}` can run other programs and is refused"
            )


def _git_environment(workspace_root: Path) -> dict[str, str]:
    environment = {
        # Without a ceiling, git in a workspace that is no repository finds one above it.
        "GIT_CEILING_DIRECTORIES": str(workspace_root.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_COUNT": str(len(_GIT_HARDENING)),
    }
    for index, (key, value) in enumerate(_GIT_HARDENING.items()):
        environment[f"GIT_CONFIG_KEY_{index}"] = key
        environment[f"GIT_CONFIG_VALUE_{index}"] = value
    return environment
