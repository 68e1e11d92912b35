"""Per-program guards: options and subcommands that would let an allowed program run others."""

from __future__ import annotations

from pathlib import Path

from runner.command_line import CommandRefused

_FIND_REFUSED_OPTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# Options that read the names of the files to work on from a file: the names in it (written by
# the model: `/etc/shadow`) never meet the argument checks, and the program opens them.
_FIND_FILES_FROM = frozenset({"-files0-from"})
_FILES_FROM_LONG_OPTIONS = {"sort": ("--files0-from",), "wc": ("--files0-from",)}
# `-c` sets any configuration (`core.sshCommand`, `core.fsmonitor`) for one command.
_GIT_REFUSED_OPTIONS = frozenset({"-c"})
# Long options that run a program, or point git at a configuration the workspace can write
# (a bare repository, a template, a git directory outside `.git`). Git accepts any unambiguous
# abbreviation of a long option (`--upload-pa`), so every prefix of these is refused too.
_GIT_REFUSED_LONG_OPTIONS = (
    "--config",
    "--config-env",
    "--exec",
    "--exec-path",
    "--git-dir",
    "--open-files-in-pager",
    "--receive-pack",
    "--separate-git-dir",
    "--template",
    "--upload-pack",
)
# Short options of a subcommand that run a program, and the short options there that take a
# value (the rest of a cluster after one of those is its value): `git clone -qc<key=cmd>`,
# `git grep -nO<cmd>`.
_GIT_REFUSED_SHORT_OPTIONS = {"clone": ("cu", "obucj"), "grep": ("O", "ABCefmO")}
# `cp -s` makes symbolic links whose text is only checked where it is made; swapping a
# directory on its way afterwards points it out of the workspace.
_CP_REFUSED_LONG_OPTIONS = ("--symbolic-link",)
_CP_REFUSED_SHORT_OPTIONS = ("s", "St")
# Options that follow every symbolic link met on a walk: a link the project shipped, moved to
# a shallower folder (`mv a/b/link a/`), leads out of the workspace with the same text, and
# only the paths a command names are resolved here. Without them the walk reads links as links.
_LINK_FOLLOWING_SHORT = {"grep": ("R", "ABCDdefm"), "ls": ("L", "ITw"), "cp": ("L", "St")}
_LINK_FOLLOWING_LONG = {
    "grep": ("--dereference-recursive",),
    "ls": ("--dereference",),
    "cp": ("--dereference",),
}
_FIND_LINK_FOLLOWING = frozenset({"-L", "-H", "-follow"})
# `sort --compress-program=sh` pipes the (sorted) input through any program on PATH.
_SORT_REFUSED_LONG_OPTIONS = ("--compress-program",)
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
_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "--work-tree", "--namespace"})
# Config the repository cannot override, given to git through the environment.
_GIT_HARDENING = {
    "core.hooksPath": "/dev/null",
    "core.fsmonitor": "false",
    "core.pager": "cat",
    "core.editor": "true",
    "sequence.editor": "true",
    "credential.helper": "",
    "protocol.ext.allow": "never",
    # A local repository (`file://`, a path) may be anywhere on the machine, not just here.
    "protocol.file.allow": "never",
    # Only `.git` is a repository: a bare one is a directory the workspace can write, config too.
    "safe.bareRepository": "explicit",
    # A checked-out symbolic link could point out of the workspace for the next command.
    "core.symlinks": "false",
}


def check_program_arguments(program: str, arguments: list[str]) -> None:
    """Raise `CommandRefused` when the arguments would make `program` run another program."""
    if program == "find":
        _refuse_options(program, arguments, _FIND_REFUSED_OPTIONS)
    if program == "git":
        _check_git(arguments)
    if program == "cp":
        _refuse_long_prefixes(program, arguments, _CP_REFUSED_LONG_OPTIONS)
        _refuse_short_options(program, arguments, *_CP_REFUSED_SHORT_OPTIONS)
    if program == "sort":
        _refuse_long_prefixes(program, arguments, _SORT_REFUSED_LONG_OPTIONS)
    if program in _FILES_FROM_LONG_OPTIONS:
        _refuse_long_prefixes(program, arguments, _FILES_FROM_LONG_OPTIONS[program])
    if program == "find":
        for argument in arguments:
            if argument in _FIND_FILES_FROM:
                raise CommandRefused(
                    f"`find {argument}` reads the paths it starts from out of a file, where "
                    "they are not checked; name them on the command line"
                )
    _refuse_link_following(program, arguments)


def program_leading_arguments(program: str) -> tuple[str, ...]:
    """Arguments put before the command's own: diff follows the links inside the directories
    it compares unless told not to."""
    return ("--no-dereference",) if program == "diff" else ()


def _refuse_link_following(program: str, arguments: list[str]) -> None:
    hint = "it follows symbolic links on its walk, which may lead out of the workspace"
    if program == "find":
        for argument in arguments:
            if argument in _FIND_LINK_FOLLOWING:
                raise CommandRefused(f"`find {argument}`: {hint}; leave it out")
    if program in _LINK_FOLLOWING_SHORT:
        letters, with_value = _LINK_FOLLOWING_SHORT[program]
        for argument in arguments:
            if argument == "--":
                break
            name = argument.split("=", 1)[0]
            if len(name) > 2 and name.startswith("--"):
                if any(option.startswith(name) for option in _LINK_FOLLOWING_LONG[program]):
                    raise CommandRefused(f"`{program} {name}`: {hint}")
                continue
            if len(argument) < 2 or argument[0] != "-":
                continue
            for letter in argument[1:]:
                if letter in letters:
                    plain = " (use -r)" if program == "grep" else ""
                    raise CommandRefused(f"`{program} -{letter}`: {hint}{plain}")
                if letter in with_value:
                    break


def program_environment(
    program: str, workspace_root: Path, *, ssh_allowed: bool = False
) -> dict[str, str]:
    """Extra environment a program needs to stay inside its guards. `ssh_allowed`: the
    executor may run `ssh` itself (an exfiltration program it was built with)."""
    return _git_environment(workspace_root, ssh_allowed) if program == "git" else {}


def _check_git(arguments: list[str]) -> None:
    _refuse_options("git", arguments, _GIT_REFUSED_OPTIONS)
    _refuse_long_prefixes("git", arguments, _GIT_REFUSED_LONG_OPTIONS)
    for argument in arguments:
        # A `file:` URL names any place on the machine; the path checks read it as a
        # relative name. (The file transport is off too, but a bundle URI is no transport.)
        if argument.split("=", 1)[-1].lower().startswith("file:"):
            raise CommandRefused(f"`{argument}`: a file: URL leaves the workspace")
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
        if argument in _GIT_REFUSED_SHORT_OPTIONS:
            refused, with_value = _GIT_REFUSED_SHORT_OPTIONS[argument]
            _refuse_short_options(f"git {argument}", arguments[index + 1 :], refused, with_value)
        return


def _refuse_options(program: str, arguments: list[str], refused: frozenset[str]) -> None:
    for argument in arguments:
        if argument.split("=", 1)[0] in refused:
            raise CommandRefused(
                f"`{program} {argument.split('=', 1)[0]}` can run other programs and is refused"
            )


def _refuse_long_prefixes(program: str, arguments: list[str], refused: tuple[str, ...]) -> None:
    for argument in arguments:
        name = argument.split("=", 1)[0]
        if len(name) > 2 and name.startswith("--"):
            matched = [option for option in refused if option.startswith(name)]
            if matched:
                raise CommandRefused(
                    f"`{program} {name}` (as `{matched[0]}`) can run other programs or "
                    "leave the workspace, and is refused"
                )


def _refuse_short_options(
    program: str, arguments: list[str], refused: str, with_value: str
) -> None:
    for argument in arguments:
        if argument == "--":
            return
        if len(argument) < 2 or argument[0] != "-" or argument[1] == "-":
            continue
        for letter in argument[1:]:
            if letter in refused:
                raise CommandRefused(
                    f"`{program} -{letter}` can run other programs or leave the workspace, "
                    "and is refused"
                )
            if letter in with_value:
                break  # the rest of the cluster is this option's value


def _git_environment(workspace_root: Path, ssh_allowed: bool) -> dict[str, str]:
    hardening = dict(_GIT_HARDENING)
    if not ssh_allowed:
        # A `host:path` or `ssh://` remote makes git start ssh, which the executor runs only
        # when it was built with it.
        hardening["protocol.ssh.allow"] = "never"
    environment = {
        # Without a ceiling, git in a workspace that is no repository finds one above it.
        "GIT_CEILING_DIRECTORIES": str(workspace_root.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_COUNT": str(len(hardening)),
    }
    for index, (key, value) in enumerate(hardening.items()):
        environment[f"GIT_CONFIG_KEY_{index}"] = key
        environment[f"GIT_CONFIG_VALUE_{index}"] = value
    return environment
