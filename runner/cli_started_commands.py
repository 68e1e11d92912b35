"""The commands an agent CLI starts by itself, outside any tool call fluidbox decides: hooks on
the events other than the one before a tool (`SessionStart`, `PostToolUse`, `Stop`, …), a
status line, a helper that makes the API key or headers, a local (stdio) MCP server, Codex's
`notify` program and a model provider's `auth` program, Gemini CLI's tool discovery command,
what a plugin (Claude Code, Codex) or an extension (Gemini CLI) brings, a Claude Code skill's,
command's or subagent's own hooks and servers, an AWS profile's credential program, the
user's shell start-up files, which Claude Code and Codex run for a snapshot of the shell, and
the files any of those commands name (`sh tools/post.sh` runs what tools/post.sh holds).

A project or the user may have them when fluidbox is set up: they are theirs, and stay.
One that appears during a run (a `patch` or an archive the policy allowed writes it) would run
at the next session's start, or after the next tool, with no gate and no record. So
agent_setup writes a fingerprint of each one it found into the hook's command line, and the
hook denies every call while the files hold one it was not given. The session keeps the
command line it started with: Claude Code applies a settings file changed mid-session, but
asks the hook first (`ConfigChange`), and the hook refuses such a change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.cli_trust import gemini_home
from runner.command_files import named_paths
from runner.mcp_shadows import claude_code_servers, process_ancestors
from runner.setup_hazards import (
    OUR_HOOK_MARK,
    HookHazard,
    claude_code_front_matters,
    claude_code_settings,
    claude_code_user_folder,
    codex_config_files,
    codex_home,
    codex_hook_tables,
    gemini_cli_settings,
    json_object,
    toml_table,
)

# The events whose hooks setup_hazards already allows only as fluidbox's own.
PRE_TOOL_EVENTS = {
    "claude-code": ("PreToolUse", "PermissionRequest"),
    "codex": ("PreToolUse", "PermissionRequest"),
    "gemini-cli": ("BeforeTool",),
}
# Claude Code's settings that name a program it runs: the status line (after each turn), the
# helpers it runs for credentials and telemetry headers, the file suggester, and the plugins,
# which bring hooks and MCP servers of their own.
CLAUDE_CODE_COMMAND_SETTINGS = (
    "apiKeyHelper",
    "awsAuthRefresh",
    "awsCredentialExport",
    "gcpAuthRefresh",
    "otelHeadersHelper",
    "proxyAuthHelper",
    "statusLine",
    "subagentStatusLine",
    "fileSuggestion",
    "enabledPlugins",
    "extraKnownMarketplaces",
)
GEMINI_COMMAND_SETTINGS = ("discoveryCommand", "callCommand")  # under `tools`


@dataclass(frozen=True)
class StartedCommand:
    path: Path
    where: str
    value: Any
    # The plugin's or extension's folder it comes from (`${CLAUDE_PLUGIN_ROOT}`), if any.
    root: Path | None = None

    @property
    def fingerprint(self) -> str:
        """Where the setting is and what it runs, not which file holds it: moving a hook from
        the user's settings to the project's changes nothing that runs."""
        canonical = json.dumps([self.where, self.value], sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def __str__(self) -> str:
        shown = json.dumps(self.value, sort_keys=True)
        shown = shown if len(shown) <= 160 else shown[:157] + "..."
        return (
            f"{self.path}: {self.where} makes the CLI run {shown} by itself, outside any call "
            "fluidbox decides"
        )


IsOurs = Callable[[str], bool]


def _ours_to_replace(command: str) -> bool:
    """At setup: an entry of fluidbox's hook, which agent_setup replaces with its own."""
    return OUR_HOOK_MARK in command


def _event_hooks(
    path: Path, hooks: object, skipped: tuple[str, ...], is_ours: IsOurs, where: str = "hooks"
) -> Iterator[StartedCommand]:
    """Each hook of the events not `skipped` but fluidbox's own (Claude Code's
    `ConfigChange` entry is the hook itself)."""
    if not isinstance(hooks, dict):
        return
    for event, entries in hooks.items():
        # An event holds a list of entries; Codex keeps its trust in a table beside them.
        if event in skipped or not isinstance(entries, list):
            continue
        for entry in entries:
            inner = entry.get("hooks") if isinstance(entry, dict) else None
            for hook in inner if isinstance(inner, list) else [entry]:
                command = hook.get("command") if isinstance(hook, dict) else None
                if not (isinstance(command, str) and is_ours(command)):
                    yield StartedCommand(path, f"{where}.{event}", hook)


# What makes an MCP server entry a program the CLI starts: its `command`, or a program that
# makes its headers (Claude Code's `headersHelper`, Codex's `http_headers_helper`).
SERVER_PROGRAM_KEYS = ("command", "headersHelper", "http_headers_helper")


def _local_servers(path: Path, servers: object, where: str) -> Iterator[StartedCommand]:
    """MCP servers the CLI starts as a program, or reaches with headers a program makes; one
    it only reaches by URL runs nothing here, and its tools' calls reach the hook. Claude Code
    starts a project's `.mcp.json` programs whatever `enabledMcpjsonServers` lists (2.1.328,
    `-p`)."""
    if not isinstance(servers, dict):
        return
    for name, entry in servers.items():
        if isinstance(entry, dict) and any(key in entry for key in SERVER_PROGRAM_KEYS):
            yield StartedCommand(path, f"{where}.{name}", entry)


# What a plugin's manifest may name instead of its default files: a path, or several.
MANIFEST_FILE_KEYS = ("hooks", "mcpServers", "lspServers")


def _plugin_files(folder: Path, where: str, names: tuple[str, ...]) -> Iterator[StartedCommand]:
    """A plugin's or extension's files that say what runs, each whole: its manifest (hooks and
    servers written inline, or the files it names), its hooks, its servers."""
    named: list[str] = []
    for name in names:
        path = folder / name
        if path.is_file():
            content = json_object(path)
            yield StartedCommand(path, where, content, folder)
            for key in MANIFEST_FILE_KEYS:
                value = content.get(key)
                named += [value] if isinstance(value, str) else []
                named += [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    for name in dict.fromkeys(named):
        path = folder / name
        if path.is_file():
            yield StartedCommand(path, where, json_object(path), folder)


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _folders(parent: Path, depth: int = 1) -> list[Path]:
    """The folders `depth` levels below `parent`, in order (one the CLI's user cannot read
    is one the CLI cannot load from either)."""
    found = [parent]
    for _ in range(depth):
        below = []
        for folder in found:
            try:
                below += [child for child in folder.iterdir() if child.is_dir()]
            except OSError:
                continue
        found = sorted(below)
    return found


def _claude_code(project: Path, is_ours: IsOurs) -> Iterator[StartedCommand]:
    for path in claude_code_settings(project):
        settings = json_object(path)
        yield from _event_hooks(
            path, settings.get("hooks"), PRE_TOOL_EVENTS["claude-code"], is_ours
        )
        for name in CLAUDE_CODE_COMMAND_SETTINGS:
            if settings.get(name):
                yield StartedCommand(path, name, settings[name])
    # The user's and this project's servers in ~/.claude.json, `.mcp.json` here and above,
    # the managed ones (one that cannot be read is setup_hazards' to refuse).
    for path, servers in claude_code_servers(project):
        if servers is None:
            yield StartedCommand(Path(path), "mcpServers", {"unreadable": _digest(Path(path))})
        yield from _local_servers(Path(path), servers, "mcpServers")
    # A skill's, a command's or a subagent's own hooks and servers, while it is in use.
    for path, where, matter in claude_code_front_matters(project):
        yield from _event_hooks(
            path, matter.get("hooks"), PRE_TOOL_EVENTS["claude-code"], is_ours, f"{where}.hooks"
        )
        for key in ("mcpServers", "unread"):
            if matter.get(key):
                yield StartedCommand(path, f"{where}.{key}", matter[key])
    yield from _claude_code_plugins(project)
    yield from _aws_credential_programs(project, claude_code_settings(project))
    yield from _shell_start_up_files()


# What a Claude Code plugin folder may hold that runs: its manifest (hooks and servers
# written inline, or the files it names), hooks, MCP and language servers.
CLAUDE_CODE_PLUGIN_FILES = (
    ".claude-plugin/plugin.json",
    "hooks/hooks.json",
    ".mcp.json",
    ".lsp.json",
)


def _claude_code_plugins(project: Path) -> Iterator[StartedCommand]:
    """Each plugin folder Claude Code loads, and its files whole: an installed plugin's
    (`installed_plugins.json` names it; one from a folder marketplace runs from that folder),
    and a `skills/` folder holding a plugin manifest (the user's; the project's once
    trusted), which loads with no setting at all (2.1.328). Which folder a plugin is loaded
    from is fingerprinted too: pointing it elsewhere is a change."""
    plugins = claude_code_user_folder() / "plugins"
    folders: list[Path] = []
    known = plugins / "known_marketplaces.json"
    for name, market in json_object(known).items():
        if isinstance(market, dict):
            where_from = {key: market.get(key) for key in ("source", "installLocation")}
            yield StartedCommand(known, f"plugins.marketplaces.{name}", where_from)
            if isinstance(market.get("installLocation"), str):
                folders += _marketplace_plugins(Path(market["installLocation"]))
    for path in claude_code_settings(project):
        extra = json_object(path).get("extraKnownMarketplaces")
        for market in extra.values() if isinstance(extra, dict) else ():
            source = market.get("source") if isinstance(market, dict) else None
            if isinstance(source, dict) and isinstance(source.get("path"), str):
                folders += _marketplace_plugins(project / source["path"])
    installed = plugins / "installed_plugins.json"
    entries = json_object(installed).get("plugins")
    for name, installs in entries.items() if isinstance(entries, dict) else ():
        listed = installs if isinstance(installs, list) else []
        paths = [install.get("installPath") for install in listed if isinstance(install, dict)]
        yield StartedCommand(installed, f"plugins.installed.{name}", paths)
        folders += [Path(path) for path in paths if isinstance(path, str)]
    for path, value in _plugin_dirs_settings(project):
        yield StartedCommand(path, f"env.{PLUGIN_DIRS_VARIABLE}", value)
        folders += _plugin_dirs(value)
    folders += _plugin_dirs(os.environ.get(PLUGIN_DIRS_VARIABLE, ""))
    folders += [Path(folder) for folder in _launched_plugin_dirs()]
    for skills in (claude_code_user_folder() / "skills", project / ".claude" / "skills"):
        folders += [f for f in _folders(skills) if (f / ".claude-plugin" / "plugin.json").exists()]
    for folder in dict.fromkeys(folders):
        named = json_object(folder / ".claude-plugin" / "plugin.json").get("name")
        where = f"plugin {named if isinstance(named, str) else folder.name}"
        yield from _plugin_files(folder, where, CLAUDE_CODE_PLUGIN_FILES)


# Plugin folders Claude Code loads for a session, by the environment (or a settings file's
# `env`) or its command line (`--plugin-dir`).
PLUGIN_DIRS_VARIABLE = "CLAUDE_CODE_PLUGIN_DIRS"


def _plugin_dirs_settings(project: Path) -> Iterator[tuple[Path, str]]:
    for path in claude_code_settings(project):
        env = json_object(path).get("env")
        if isinstance(env, dict) and isinstance(env.get(PLUGIN_DIRS_VARIABLE), str):
            yield path, env[PLUGIN_DIRS_VARIABLE]


def _plugin_dirs(value: str) -> list[Path]:
    """As Claude Code splits the variable: absolute folders or `~/…`, by the path separator."""
    words = [word.strip() for word in value.split(os.pathsep)]
    return [Path(word).expanduser() for word in words if word.startswith(("/", "~"))]


def _launched_plugin_dirs() -> Iterator[str]:
    for _, argv in process_ancestors():
        taking = False
        for word in argv:
            if word.startswith("--plugin-dir="):
                yield word.partition("=")[2]
            elif taking:
                yield word
            taking = word == "--plugin-dir"


def _marketplace_plugins(market: Path) -> list[Path]:
    """The plugin folders a marketplace folder lists (`.claude-plugin/marketplace.json`, each
    plugin's `source` a folder in it); one from elsewhere (a git repository) is installed,
    and read from where it was installed."""
    listed = json_object(market / ".claude-plugin" / "marketplace.json").get("plugins")
    plugins = listed if isinstance(listed, list) else []
    return [
        market / plugin["source"]
        for plugin in plugins
        if isinstance(plugin, dict) and isinstance(plugin.get("source"), str)
    ]


# The user's shell start-up files: Claude Code and Codex run them to take a snapshot of the
# shell (functions, aliases, options) that each command then starts from.
SHELL_START_UP_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshenv",
    ".zprofile",
    ".zshrc",
)


AWS_FILES = (
    ("AWS_CONFIG_FILE", "~/.aws/config"),
    ("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials"),
)
_AWS_SECTION = re.compile(r"\s*\[([^\]]*)\]")
_AWS_CREDENTIAL_PROCESS = re.compile(r"\s*credential_process\s*=\s*(.*?)\s*$")


def _aws_credential_programs(
    project: Path, settings: Iterable[Path] = ()
) -> Iterator[StartedCommand]:
    """The programs the AWS SDK runs for credentials (`credential_process` of a profile in the
    shared config or credentials file, where the environment says, or the `env` of Claude
    Code's `settings`, which is the CLI's own): Claude Code on Bedrock and Codex's Bedrock
    provider run it before the first request to the model. Read line by line, an indented
    key too (the SDK Claude Code uses reads one that Python's configparser takes for the
    line before's continuation)."""
    envs = [json_object(path).get("env") for path in settings]
    for variable, default in AWS_FILES:
        named = [os.environ.get(variable) or default]
        named += [env.get(variable) for env in envs if isinstance(env, dict)]
        for name in dict.fromkeys(n for n in named if isinstance(n, str) and n):
            path = project / Path(name).expanduser()
            try:
                lines = path.read_text().splitlines()
            except FileNotFoundError:
                continue
            except (OSError, UnicodeDecodeError):
                yield StartedCommand(path, "AWS profiles", {"unreadable": _digest(path)})
                continue
            section = ""
            for line in lines:
                if header := _AWS_SECTION.match(line):
                    section = header.group(1).strip()
                elif program := _AWS_CREDENTIAL_PROCESS.match(line):
                    yield StartedCommand(path, f"[{section}] credential_process", program.group(1))


def _shell_start_up_files() -> Iterator[StartedCommand]:
    for name in SHELL_START_UP_FILES:
        path = Path.home() / name
        digest = _digest(path)
        if digest is not None:
            yield StartedCommand(path, "shell start-up file", {"sha256": digest})


def _gemini_cli(project: Path, is_ours: IsOurs) -> Iterator[StartedCommand]:
    for path in gemini_cli_settings(project):
        settings = json_object(path)
        yield from _event_hooks(path, settings.get("hooks"), PRE_TOOL_EVENTS["gemini-cli"], is_ours)
        yield from _local_servers(path, settings.get("mcpServers"), "mcpServers")
        tools, mcp = settings.get("tools"), settings.get("mcp")
        for name in GEMINI_COMMAND_SETTINGS:
            if isinstance(tools, dict) and tools.get(name):
                yield StartedCommand(path, f"tools.{name}", tools[name])
        if isinstance(mcp, dict) and mcp.get("serverCommand"):
            yield StartedCommand(path, "mcp.serverCommand", mcp["serverCommand"])
    yield from _gemini_extensions()


GEMINI_EXTENSION_FILES = ("gemini-extension.json", "hooks/hooks.json")


def _gemini_extensions() -> Iterator[StartedCommand]:
    """Gemini CLI loads each folder of its user folder's `extensions/`, installed or just put
    there (0.61.0), a linked one from the folder its `.gemini-extension-install.json` names:
    the manifest's MCP servers start, the hooks of `hooks/hooks.json` run. Which are on is
    `extension-enablement.json`'s say."""
    extensions = gemini_home() / "extensions"
    enablement = extensions / "extension-enablement.json"
    if enablement.exists():
        yield StartedCommand(enablement, "extensions", json_object(enablement))
    for folder in _folders(extensions):
        install = json_object(folder / ".gemini-extension-install.json")
        source = folder
        if install.get("type") == "link" and isinstance(install.get("source"), str):
            source = Path(install["source"])
        yield from _plugin_files(source, f"extension {folder.name}", GEMINI_EXTENSION_FILES)


def _codex(project: Path, is_ours: IsOurs) -> Iterator[StartedCommand]:
    for path, hooks in codex_hook_tables(project):
        yield from _event_hooks(path, hooks, PRE_TOOL_EVENTS["codex"], is_ours)
    for path in codex_config_files(project):
        config = toml_table(path)
        yield from _event_hooks(path, config.get("hooks"), PRE_TOOL_EVENTS["codex"], is_ours)
        yield from _local_servers(path, config.get("mcp_servers"), "mcp_servers")
        profiles = config.get("profiles")
        tables = [("", config)]
        if isinstance(profiles, dict):
            tables += [(f"profiles.{n}.", p) for n, p in profiles.items() if isinstance(p, dict)]
        for prefix, table in tables:
            if table.get("notify"):
                yield StartedCommand(path, f"{prefix}notify", table["notify"])
        # A provider's `auth` program makes its key, before the first request to the model;
        # Amazon Bedrock's `aws` table names a credential program too.
        providers = config.get("model_providers")
        for name, provider in providers.items() if isinstance(providers, dict) else ():
            for key in ("auth", "aws"):
                if isinstance(provider, dict) and provider.get(key):
                    yield StartedCommand(path, f"model_providers.{name}.{key}", provider[key])
        if config.get("plugins"):
            yield StartedCommand(path, "plugins", config["plugins"])
    yield from _codex_plugins()
    yield from _aws_credential_programs(project)
    yield from _shell_start_up_files()


CODEX_PLUGIN_FILES = (".codex-plugin/plugin.json", ".mcp.json", "hooks/hooks.json")


def _codex_plugins() -> Iterator[StartedCommand]:
    """Codex runs an enabled plugin from its user folder's cache,
    `plugins/cache/<marketplace>/<plugin>/<version>/`: its servers start with no trust step."""
    for folder in _folders(codex_home() / "plugins" / "cache", depth=3):
        yield from _plugin_files(
            folder, "plugin " + "/".join(folder.parts[-3:]), CODEX_PLUGIN_FILES
        )


STARTED_COMMANDS = {"claude-code": _claude_code, "codex": _codex, "gemini-cli": _gemini_cli}


# Past this size a file a command names is held by its size and modification time instead of
# its digest.
NAMED_FILE_DIGEST_LIMIT = 4 * 1024 * 1024


@dataclass(frozen=True)
class NamedFile:
    path: Path
    word: str
    named_by: StartedCommand
    pattern: bool = False  # a glob (its folder escaped) that a file yet to be made may match
    there: bool = True  # a file the CLI's user can change, or replace in its folder


@dataclass(frozen=True)
class WhatTheCliStarts:
    """The commands a CLI starts by itself, read once: `commands` holds the files among them
    that are there to change (by digest), `named` every file they name, there or not (what a
    write must not make or change)."""

    commands: list[StartedCommand]
    named: list[NamedFile]


def what_the_cli_starts(
    agent: str,
    project: Path,
    is_ours: IsOurs = _ours_to_replace,
    session_folder: Path | None = None,
) -> WhatTheCliStarts:
    """Raises HookHazard for a settings file that is not JSON/TOML. `session_folder`: where
    the session's commands run now, when it can move (Claude Code's follows a `cd`), besides
    the project."""
    commands = list(STARTED_COMMANDS[agent](project, is_ours))
    named = list(named_files(commands, project, there_or_not=True, session_folder=session_folder))
    return WhatTheCliStarts(commands + [_held(file) for file in named if file.there], named)


def started_commands(
    agent: str,
    project: Path,
    is_ours: IsOurs = _ours_to_replace,
    session_folder: Path | None = None,
) -> list[StartedCommand]:
    return what_the_cli_starts(agent, project, is_ours, session_folder).commands


def _command_entries(value: Any, whole: bool = True) -> Iterator[tuple[list[str], Any]]:
    """The words of each command a setting's value holds, with the folder it runs in if it
    says (`cwd`): the setting's whole value as a command line or a list of words (`notify`),
    a `{"command", "args", "env"}` entry however deep in a manifest (an environment value
    may name a file the program runs: `BASH_ENV`, `NODE_OPTIONS=--require ./x.js`); other
    text (a description, a URL, a manifest's file names) is not read."""
    if isinstance(value, str) and whole:
        yield [value], None
    elif isinstance(value, list):
        if whole and all(isinstance(word, str) for word in value):
            yield list(value), None
        else:
            for item in value:
                yield from _command_entries(item, whole=False)
    elif isinstance(value, dict):
        words = [value.get(key) for key in ("command", *SERVER_PROGRAM_KEYS[1:])]
        args, env = value.get("args"), value.get("env")
        words += args if isinstance(args, list) else []
        words = [word for word in words if isinstance(word, str)]
        if words:
            values = env.values() if isinstance(env, dict) else ()
            yield words + [f"x {v}" for v in values if isinstance(v, str)], value.get("cwd")
        for key, inner in value.items():
            if key not in ("command", "args", "cwd", "env", *SERVER_PROGRAM_KEYS[1:]):
                yield from _command_entries(inner, whole=False)


def named_files(
    commands: Iterable[StartedCommand],
    project: Path,
    *,
    there_or_not: bool = False,
    session_folder: Path | None = None,
) -> Iterator[NamedFile]:
    """The files the commands name (runner/command_files.py says how they are read) that the
    CLI's user can change, or replace in their folder; `there_or_not`: also the paths and
    globs that nothing is at yet (a write that makes one makes it run)."""
    for command in commands:
        for words, cwd in _command_entries(command.value):
            folders = [project / cwd if isinstance(cwd, str) else project]
            folders += [session_folder] if session_folder is not None else []
            seen = set()
            for named in named_paths(words, folders, project, command.root):
                # `tools/sub/../post.sh` as the kernel goes
                path = named.path if named.pattern else Path(os.path.realpath(named.path))
                if path in seen:
                    continue
                seen.add(path)
                if named.pattern:
                    if there_or_not:
                        yield NamedFile(path, named.word, command, pattern=True, there=False)
                elif _changeable_file(path):
                    yield NamedFile(path, named.word, command)
                elif there_or_not and _may_be_made(named.word, path):
                    yield NamedFile(path, named.word, command, there=False)


def _may_be_made(word: str, path: Path) -> bool:
    """A path that is not there yet, written as a path (`.claude/hooks/later.sh`, `x.py`), not
    a bare word (`2` before `>`, `main`)."""
    return ("/" in word or "." in word.lstrip(".")) and not path.exists()


def _changeable_file(path: Path) -> bool:
    """A file the CLI's user may write, or replace in its folder (`chmod 444` keeps neither
    from happening: a patch deletes and adds it)."""
    try:
        return path.is_file() and (
            os.access(path, os.W_OK) or os.access(path.parent, os.W_OK | os.X_OK)
        )
    except OSError:
        return False


def _held(file: NamedFile) -> StartedCommand:
    try:
        stat = file.path.stat()
    except OSError:
        held: dict[str, Any] = {"unreadable": True}
    else:
        if stat.st_size > NAMED_FILE_DIGEST_LIMIT:
            held = {"size": stat.st_size, "modified": stat.st_mtime_ns}
        else:
            held = {"sha256": _digest(file.path)}
    where = f"the file {file.word} that {file.named_by.where} names"
    return StartedCommand(file.path, where, {file.word: held})


def fingerprints(agent: str, project: Path) -> list[str]:
    return sorted({command.fingerprint for command in started_commands(agent, project)})


def unknown_started_commands(
    agent: str,
    project: Path,
    known: Iterable[str],
    is_ours: IsOurs,
    session_folder: Path | None = None,
) -> list[str]:
    """A line for each command the CLI would start by itself whose fingerprint agent_setup
    did not give the hook (`is_ours`: the hook's own command lines)."""
    try:
        started = what_the_cli_starts(agent, project, is_ours, session_folder)
    except HookHazard as error:
        return [str(error)]
    return not_known(started, known)


def not_known(started: WhatTheCliStarts, known: Iterable[str]) -> list[str]:
    known = set(known)
    return [str(command) for command in started.commands if command.fingerprint not in known]
