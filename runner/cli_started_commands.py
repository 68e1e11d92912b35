"""The commands an agent CLI starts by itself, outside any tool call fluidbox decides: hooks on
the events other than the one before a tool (`SessionStart`, `PostToolUse`, `Stop`, …), a
status line, a helper that makes the API key or headers, a local (stdio) MCP server, Codex's
`notify` program, Gemini CLI's tool discovery command.

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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.setup_hazards import (
    OUR_HOOK_MARK,
    HookHazard,
    claude_code_settings,
    codex_folders,
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
)
GEMINI_COMMAND_SETTINGS = ("discoveryCommand", "callCommand")  # under `tools`


@dataclass(frozen=True)
class StartedCommand:
    path: Path
    where: str
    value: Any

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
    path: Path, hooks: object, skipped: tuple[str, ...], is_ours: IsOurs
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
                    yield StartedCommand(path, f"hooks.{event}", hook)


def _local_servers(path: Path, servers: object, where: str) -> Iterator[StartedCommand]:
    """MCP servers the CLI starts as a program (a `command`), or reaches with headers a
    program makes (Claude Code's `headersHelper`); one it only reaches by URL runs nothing
    here, and its tools' calls reach the hook. Claude Code starts a project's `.mcp.json`
    programs whatever `enabledMcpjsonServers` lists (2.1.328, `-p`)."""
    if not isinstance(servers, dict):
        return
    for name, entry in servers.items():
        if isinstance(entry, dict) and ("command" in entry or "headersHelper" in entry):
            yield StartedCommand(path, f"{where}.{name}", entry)


def _claude_code(project: Path, is_ours: IsOurs) -> Iterator[StartedCommand]:
    for path in claude_code_settings(project):
        settings = json_object(path)
        yield from _event_hooks(
            path, settings.get("hooks"), PRE_TOOL_EVENTS["claude-code"], is_ours
        )
        for name in CLAUDE_CODE_COMMAND_SETTINGS:
            if settings.get(name):
                yield StartedCommand(path, name, settings[name])
    mcp = project / ".mcp.json"
    yield from _local_servers(mcp, json_object(mcp).get("mcpServers"), "mcpServers")


def _gemini_cli(project: Path, is_ours: IsOurs) -> Iterator[StartedCommand]:
    for path in gemini_cli_settings(project):
        settings = json_object(path)
        yield from _event_hooks(path, settings.get("hooks"), PRE_TOOL_EVENTS["gemini-cli"], is_ours)
        yield from _local_servers(path, settings.get("mcpServers"), "mcpServers")
        tools = settings.get("tools")
        for name in GEMINI_COMMAND_SETTINGS:
            if isinstance(tools, dict) and tools.get(name):
                yield StartedCommand(path, f"tools.{name}", tools[name])


def _codex(project: Path, is_ours: IsOurs) -> Iterator[StartedCommand]:
    for folder in codex_folders(project):
        path = folder / "hooks.json"
        hooks = json_object(path).get("hooks")
        yield from _event_hooks(path, hooks, PRE_TOOL_EVENTS["codex"], is_ours)
        path = folder / "config.toml"
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


STARTED_COMMANDS = {"claude-code": _claude_code, "codex": _codex, "gemini-cli": _gemini_cli}


def started_commands(
    agent: str, project: Path, is_ours: IsOurs = _ours_to_replace
) -> list[StartedCommand]:
    """Raises HookHazard for a settings file that is not JSON/TOML."""
    return list(STARTED_COMMANDS[agent](project, is_ours))


def fingerprints(agent: str, project: Path) -> list[str]:
    return sorted({command.fingerprint for command in started_commands(agent, project)})


def unknown_started_commands(
    agent: str, project: Path, known: Iterable[str], is_ours: IsOurs
) -> list[str]:
    """A line for each command the CLI would start by itself whose fingerprint agent_setup
    did not give the hook (`is_ours`: the hook's own command lines)."""
    known = set(known)
    try:
        commands = started_commands(agent, project, is_ours)
    except HookHazard as error:
        return [str(error)]
    return [str(command) for command in commands if command.fingerprint not in known]
