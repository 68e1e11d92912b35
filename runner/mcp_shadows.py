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
mcp_servers.…`) is read from the command lines of the processes the hook runs under (Linux's
`/proc`); one a plugin brings is named after its plugin (`plugin_…`), never fluidbox's.
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
CODEX_SYSTEM_MANAGED = Path("/etc/codex/managed_config.toml")


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
        sources = claude_code_servers(project)
    elif agent == "codex":
        sources = _codex_servers(project)
    else:
        sources = _gemini_servers(project)
    sources += launched_servers(agent)
    found = []
    for path, servers in sources:
        if servers is None:
            found.append(f"{path}: unreadable, so the MCP servers it names are not known")
            continue
        for name, entry in servers.items():
            # Gemini CLI tells the hook a tool's server by its name: only that name counts.
            shown = str(name) if agent == "gemini-cli" else _as_the_cli_names(str(name))
            if agent != "gemini-cli" and shown.startswith(f"{server}__"):
                found.append(
                    f"{path}: the MCP server {name!r} names its tools as fluidbox's own "
                    f"(mcp__{shown}__…)"
                )
            elif shown == server and not is_the_endpoint(entry, endpoint) and path != rewritten:
                found.append(
                    f"{path}: the MCP server {name!r} is not fluidbox's endpoint {endpoint}"
                )
    return found


def _as_the_cli_names(name: str) -> str:
    return "".join(c if _KEPT.fullmatch(c) else "__" if ord(c) > 0xFFFF else "_" for c in name)


def is_the_endpoint(entry: object, endpoint: str) -> bool:
    """An entry that reaches fluidbox's endpoint over HTTP, and nothing else: one that also
    names a program to run (stdio) or an address to dial (Gemini CLI's `tcp`) is that, whatever
    URL it carries; every URL it names is the endpoint (Gemini CLI takes `httpUrl` before
    `url`)."""
    if not isinstance(entry, dict) or any(key in entry for key in ("command", "args", "tcp")):
        return False
    if entry.get("type") not in (None, "http", "streamable-http"):
        return False
    urls = [entry[key] for key in ("url", "httpUrl") if key in entry]
    return bool(urls) and all(url == endpoint for url in urls)


def claude_code_servers(project: Path) -> list[tuple[Path | str, dict[str, Any] | None]]:
    """Each file Claude Code reads MCP servers from for this project, with its servers (None:
    the file cannot be read)."""
    configs = [Path.home() / ".claude.json"]
    if os.environ.get("CLAUDE_CONFIG_DIR"):
        configs.append(Path(os.environ["CLAUDE_CONFIG_DIR"]) / ".claude.json")
    sources = []
    for path in configs:
        data = _read(path, cli_json)
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
        data = _read(path, cli_json)
        sources.append((path, None if data is None else _table(data.get("mcpServers"))))
    return sources


def _codex_servers(project: Path) -> list[tuple[Path | str, dict[str, Any] | None]]:
    user = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    sources = []
    # The project's and its repository's (a folder above it), the user's, a profile's own
    # (`--profile NAME` reads the user folder's `NAME.config.toml`, 0.171.0), the system's
    # and its managed one.
    folders = [f / ".codex" for f in (project, *project.parents)]
    files = [f / "config.toml" for f in folders] + [user / "config.toml"]
    files += sorted(user.glob("*.config.toml")) + [CODEX_SYSTEM, CODEX_SYSTEM_MANAGED]
    for path in files:
        data = _read(path, tomllib.loads)
        sources.append((path, None if data is None else _table(data.get("mcp_servers"))))
    return sources


def _gemini_servers(project: Path) -> list[tuple[Path | str, dict[str, Any] | None]]:
    """Each settings file Gemini CLI reads MCP servers from, with its servers. Gemini CLI
    tells the hook where a tool's server is (`mcp_context`), but as the entry's `url ??
    httpUrl` while it connects to `httpUrl` first (0.61.0): an entry that keeps fluidbox's
    `url` beside another `httpUrl` is reported as the endpoint. The entries themselves say
    where the CLI connects."""
    from runner.setup_hazards import gemini_cli_settings

    sources: list[tuple[Path | str, dict[str, Any] | None]] = []
    for path in gemini_cli_settings(project):
        data = _read(path, cli_json)
        sources.append((path, None if data is None else _table(data.get("mcpServers"))))
    return sources


def launched_servers(agent: str) -> list[tuple[str, dict[str, Any] | None]]:
    """The servers given on the command line of a process the caller runs under: Claude Code's
    `--mcp-config` (JSON or a file, one or more), Codex's `-c mcp_servers…=VALUE` overrides.
    Every ancestor is read, not only the nearest: the hook may run under a shell or a wrapper,
    and a CLI started by another one's tool call is governed by both."""
    sources: list[tuple[str, dict[str, Any] | None]] = []
    for pid, argv in process_ancestors():
        where = f"the command line of process {pid} ({Path(argv[0]).name if argv else '?'})"
        if agent == "claude-code":
            cwd = Path(f"/proc/{pid}/cwd")
            sources += [(where, _claude_code_config(value, cwd)) for value in _mcp_configs(argv)]
        elif agent == "codex":
            overrides = _codex_overrides(argv)
            if overrides is not None:
                sources.append((where, overrides))
    return sources


def process_ancestors(limit: int = 64):
    """(pid, argv) of the parent process, its parent, and so on up to init."""
    pid = os.getppid()
    for _ in range(limit):
        if pid <= 1:
            return
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return  # no /proc (not Linux), or the process is gone
        argv = [part.decode(errors="surrogateescape") for part in raw.split(b"\0")]
        yield pid, argv[:-1] if argv and argv[-1] == "" else argv
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the name in parentheses may hold blanks


def _mcp_configs(argv: list[str]) -> list[str]:
    """The values of Claude Code's `--mcp-config <configs...>`: every word up to the next
    option, or the one after `=`."""
    values: list[str] = []
    taking = False
    for word in argv:
        if word.startswith("--mcp-config="):
            values.append(word.partition("=")[2])
            taking = False
        elif word == "--mcp-config":
            taking = True
        elif taking and not word.startswith("-"):
            values.append(word)
        else:
            taking = False
    return values


def _claude_code_config(value: str, cwd: Path) -> dict[str, Any] | None:
    """A `--mcp-config` value's servers: a JSON object, or the file it names (from the
    process's folder); None when it cannot be read."""
    if value.lstrip().startswith("{"):
        try:
            data = cli_json(value)
        except ValueError:
            return None
    else:
        data = _read(cwd / value, cli_json)
    return _table(data.get("mcpServers")) if isinstance(data, dict) else None


def _codex_overrides(argv: list[str]) -> dict[str, Any] | None:
    """The servers Codex's `-c`/`--config KEY=VALUE` overrides set, KEY a dotted path under
    `mcp_servers`; None when the command line sets none. A field set alone (`-c
    mcp_servers.fluidbox.command=…`) is the whole entry here: it is that server's part the
    files do not show."""
    servers: dict[str, Any] = {}
    found = False
    for override in _config_overrides(argv):
        key, _, raw = override.partition("=")
        path = [part.strip().strip('"') for part in key.split(".")]
        if path[0] != "mcp_servers":
            continue
        found = True
        value = _toml_value(raw)
        if len(path) == 1:
            servers.update(_table(value))
            continue
        entry = servers.setdefault(path[1], {})
        if len(path) == 2:
            servers[path[1]] = value
        elif isinstance(entry, dict):
            entry[".".join(path[2:])] = value
    return servers if found else None


def _config_overrides(argv: list[str]):
    words = iter(argv)
    for word in words:
        if word in ("-c", "--config"):
            yield next(words, "")
        elif word.startswith("--config="):
            yield word.partition("=")[2]
        elif word.startswith("-c") and not word.startswith("--"):
            yield word[2:]


def _toml_value(raw: str) -> object:
    """As Codex reads an override's value: TOML, or else the text itself."""
    try:
        return tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        return raw


def _holds(folder: Path, project: Path) -> bool:
    try:
        project, folder = project.resolve(), folder.resolve()
    except (OSError, RuntimeError, ValueError):
        return True  # a folder that cannot be compared: counted, to be safe
    return project == folder or folder in project.parents


def cli_json(text: str) -> Any:
    """JSON as the CLIs read it (JavaScript's JSON.parse): after a byte-order mark, which they
    skip, and without NaN or Infinity, which make them drop the whole file."""
    return json.loads(text.removeprefix("\ufeff"), parse_constant=_not_json)


def _not_json(word: str) -> None:
    raise ValueError(f"{word} is not JSON")


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
