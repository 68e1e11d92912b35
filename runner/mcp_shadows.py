"""Other MCP servers an agent CLI would call under the names of fluidbox's own tools.

Claude Code and Codex name an MCP tool `mcp__<server>__<tool>`, and both parts may hold `__`:
a server `fluidbox__tracker` with a tool `list_issues` is called
`mcp__fluidbox__tracker__list_issues`, as fluidbox's own `tracker__list_issues` is, and which
of the two the CLI calls is its choice (Claude Code keeps the one of the nearer scope; Codex
offers both). A server of fluidbox's own name at another address, in a scope that overrides
the project's `.mcp.json` (Claude Code's local and user scopes), takes every such call.

The hook leaves a call of fluidbox's own tools to the endpoint only when no such server is
configured in the files the CLI reads servers from; otherwise the call goes to the gate under
its own name, which denies it as a tool the run did not freeze. `agent_setup` refuses to set
up beside one. A server given on the CLI's command line (`claude --mcp-config`, `codex -c
mcp_servers.…`) or by a plugin is in no file read here: keep their names clear of fluidbox's
server name.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

# What the CLIs keep of a server's name in its tools' names; each other UTF-16 unit becomes `_`
# (JavaScript's replace: an emoji, two units, becomes `__`).
_KEPT = re.compile(r"[A-Za-z0-9_-]")
# Where Claude Code reads the servers an administrator manages, on Linux.
CLAUDE_CODE_MANAGED_MCP = Path("/etc/claude-code/managed-mcp.json")
CODEX_SYSTEM = Path("/etc/codex/config.toml")


def mcp_endpoint(url: str) -> str:
    """fluidbox's MCP endpoint under its base URL."""
    return f"{url.rstrip('/')}/v1/mcp"


def shadowing_servers(
    agent: str, project: Path, server: str, endpoint: str, rewritten: Path | None = None
) -> list[str]:
    """Every configured MCP server the CLI could call under a name of fluidbox's own tools, a
    line each; a file that cannot be read counts as one (it could hold any). The entry of
    fluidbox's own name in `rewritten` is let be: agent_setup is about to write it."""
    if agent == "claude-code":
        sources = _claude_code_servers(project)
    elif agent == "codex":
        sources = _codex_servers(project)
    else:
        return []  # Gemini CLI tells the hook which server a tool is from
    found = []
    for path, servers in sources:
        if servers is None:
            found.append(f"{path}: unreadable, so the MCP servers it names are not known")
            continue
        for name, entry in servers.items():
            shown = _as_the_cli_names(str(name))
            if shown.startswith(f"{server}__"):
                found.append(
                    f"{path}: the MCP server {name!r} names its tools as fluidbox's own "
                    f"(mcp__{shown}__…)"
                )
            elif shown == server and not _is_the_endpoint(entry, endpoint) and path != rewritten:
                found.append(
                    f"{path}: the MCP server {name!r} is not fluidbox's endpoint {endpoint}"
                )
    return found


def _as_the_cli_names(name: str) -> str:
    return "".join(c if _KEPT.fullmatch(c) else "__" if ord(c) > 0xFFFF else "_" for c in name)


def _is_the_endpoint(entry: object, endpoint: str) -> bool:
    """An entry that reaches fluidbox's endpoint over HTTP, and nothing else: one that also
    names a program to run (stdio) is that program, whatever URL it carries."""
    if not isinstance(entry, dict) or "command" in entry or "args" in entry:
        return False
    if entry.get("type") not in (None, "http", "streamable-http"):
        return False
    return (entry.get("url") or entry.get("httpUrl")) == endpoint


def _claude_code_servers(project: Path) -> list[tuple[Path, dict[str, Any] | None]]:
    configs = [Path.home() / ".claude.json"]
    if os.environ.get("CLAUDE_CONFIG_DIR"):
        configs.append(Path(os.environ["CLAUDE_CONFIG_DIR"]) / ".claude.json")
    sources = []
    for path in configs:
        data = _read(path, json.loads)
        if data is None:
            sources.append((path, None))
            continue
        sources.append((path, _table(data.get("mcpServers"))))
        # Local scope: the servers kept for this project's folder (or a folder above it);
        # another project's servers are not this session's.
        sources += [
            (path, _table(_table(entry).get("mcpServers")))
            for folder, entry in _table(data.get("projects")).items()
            if _holds(Path(folder), project)
        ]
    # The project's `.mcp.json`, and one in any folder above it, which Claude Code reads too.
    for path in [f / ".mcp.json" for f in (project, *project.parents)] + [CLAUDE_CODE_MANAGED_MCP]:
        data = _read(path, json.loads)
        sources.append((path, None if data is None else _table(data.get("mcpServers"))))
    return sources


def _codex_servers(project: Path) -> list[tuple[Path, dict[str, Any] | None]]:
    user = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    sources = []
    # The project's and its repository's (a folder above it), the user's, the system's.
    folders = [f / ".codex" for f in (project, *project.parents)]
    for path in [f / "config.toml" for f in folders] + [user / "config.toml", CODEX_SYSTEM]:
        data = _read(path, tomllib.loads)
        sources.append((path, None if data is None else _table(data.get("mcp_servers"))))
    return sources


def _holds(folder: Path, project: Path) -> bool:
    try:
        project, folder = project.resolve(), folder.resolve()
    except (OSError, RuntimeError, ValueError):
        return True  # a folder that cannot be compared: counted, to be safe
    return project == folder or folder in project.parents


def _read(path: Path, parse) -> dict[str, Any] | None:
    """The file's top-level table: empty when there is no file, None when it cannot be read."""
    try:
        data = parse(path.read_text())
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
