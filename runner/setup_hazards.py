"""Settings that would switch fluidbox's hook off, run code in its shell before it, run
another hook beside it that can change the call after fluidbox decided it, or send the run's
token to a server that is not fluidbox.

A repository can ship them (`.claude/settings.local.json` with `disableAllHooks`, a second
`PreToolUse` hook whose `updatedInput` turns an allowed `ls` into `rm -rf`), and so can the
user's own configuration: the CLI then runs calls fluidbox did not allow, and says nothing.
Likewise a repository's MCP server entry under fluidbox's name with another URL, or any other
entry that names `$FLUIDBOX_RUN_TOKEN`: the CLI would hand the token to that server, which
could then ask and call as the run from anywhere.
`agent_setup` looks for them in the files each CLI reads (the project's and the user's) and
refuses to set up over them, writing nothing. The agent cannot add them during a run by a
broad rule: these files are config paths (`governance/policy/config_paths.py`).

What a project can put in the hook's environment without a setting (Gemini CLI loads the
project's `.env`) is handled where the hook runs: Python isolated (`-I`), its requests
without proxies from the environment, and for Gemini CLI the variables below set empty in
the hook's own `env`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from runner.cli_trust import gemini_home
from runner.hook import RUN_ENV, TOKEN_ENV
from runner.mcp_shadows import claude_code_servers, cli_json, is_the_endpoint, shadowing_servers

# What bash or the dynamic loader acts on before the hook's command runs: a script sourced
# (BASH_ENV, ENV), options and a prompt that run commands (SHELLOPTS=xtrace with PS4), a
# library loaded into the shell.
SHELL_STARTUP_VARIABLES = (
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
)

# What makes a program fluidbox allowed run other code, read from its environment: git's
# configuration (`core.fsmonitor`, `core.pager`) and the commands it starts, the search
# paths and start-up options of the interpreters, the pager and editor programs use.
PROGRAM_STARTUP_VARIABLES = (
    "PATH",
    "PROMPT_COMMAND",
    "ZDOTDIR",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_EDITOR",
    "GIT_PAGER",
    "GIT_EXEC_PATH",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_TEMPLATE_DIR",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "MAVEN_OPTS",
    "GRADLE_OPTS",
)
PROGRAM_STARTUP_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "npm_config_", "LD_")
# What Claude Code runs every command through, hooks included: a prefix program, its shell;
# and the script it sources before each command (2.1.328).
CLAUDE_CODE_SHELL_VARIABLES = (
    "CLAUDE_CODE_SHELL_PREFIX",
    "CLAUDE_CODE_SHELL",
    "SHELL",
    "CLAUDE_ENV_FILE",
)
# What moves Gemini CLI's own folders (its settings, trust, extensions) elsewhere.
GEMINI_FOLDER_VARIABLES = (
    "GEMINI_CLI_HOME",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
    "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
)

# The hook's run and token come from its environment: a file that sets them picks the run.
RUN_VARIABLES = (TOKEN_ENV, RUN_ENV)
_DOTENV_NAME = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]")


def json_object(path: Path) -> dict[str, Any]:
    try:
        data = cli_json(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError as error:
        raise HookHazard(f"{path}: not JSON ({error}); fix it and run this again") from None
    return data if isinstance(data, dict) else {}


def toml_table(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as error:
        raise HookHazard(f"{path}: not TOML ({error}); fix it and run this again") from None


CLAUDE_CODE_MANAGED_FOLDER = Path("/etc/claude-code")


def claude_code_user_folder() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def claude_code_managed_settings() -> list[Path]:
    """An administrator's settings, which outrank every other file (on Linux)."""
    managed = CLAUDE_CODE_MANAGED_FOLDER
    return [managed / "managed-settings.json", *sorted(managed.glob("managed-settings.d/*.json"))]


def claude_code_settings(project: Path) -> list[Path]:
    """The settings files Claude Code reads for a project: its own, its local ones (and those
    of the git checkout it is a folder of, and of a worktree's main checkout), the user's,
    the managed ones."""
    return [
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
        *(checkout / ".claude" / "settings.local.json" for checkout in _git_checkouts(project)),
        claude_code_user_folder() / "settings.json",
        *claude_code_managed_settings(),
    ]


def _git_checkouts(project: Path) -> list[Path]:
    """The root of the git checkout the project is a folder of, and a worktree's main
    checkout: Claude Code reads their `.claude/settings.local.json` too (2.1.328)."""
    root = next((f for f in (project, *project.resolve().parents) if (f / ".git").exists()), None)
    if root is None:
        return []
    found = [root] if root != project else []
    try:
        pointer = (root / ".git").read_text(errors="replace") if (root / ".git").is_file() else ""
        if pointer.startswith("gitdir:"):
            git_dir = (root / pointer[len("gitdir:") :].strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                git_dir = (git_dir / common.read_text().strip()).resolve()
            if git_dir.name == ".git":
                found.append(git_dir.parent)
    except OSError:
        pass
    return found


# Where Claude Code finds skills, commands and subagents, each a Markdown file whose front
# matter may hold hooks (run while it is in use, every event's) and MCP servers.
CLAUDE_CODE_MARKDOWN = ("skills", "commands", "agents")


def claude_code_front_matters(project: Path) -> Iterator[tuple[Path, str, dict[str, Any]]]:
    """(file, `skills.NAME` or the like, its front matter) for the project's, the user's and the
    administrator's skills, commands and subagents, once for each way Claude Code reads front
    matter; front matter YAML does not read is kept as its text's digest, so a change to it
    still shows."""
    # The project's, each folder's above it (Claude Code reads their skills and commands
    # too), the user's, the administrator's.
    roots = [f / ".claude" for f in (project, *project.resolve().parents)]
    roots += [claude_code_user_folder(), CLAUDE_CODE_MANAGED_FOLDER / ".claude"]
    for root in dict.fromkeys(roots):
        for kind in CLAUDE_CODE_MARKDOWN:
            for path in _markdown_files(root / kind, skills=kind == "skills"):
                name = path.parent.name if kind == "skills" else path.stem
                for matter in _front_matters(path):
                    yield path, f"{kind}.{name}", matter


def _markdown_files(folder: Path, *, skills: bool) -> list[Path]:
    """`*/SKILL.md` for skills, any `.md` below for commands and subagents, through linked
    folders too (as Claude Code follows them), each real folder once."""
    found: list[Path] = []
    seen: set[str] = set()
    for here, folders, files in os.walk(folder, followlinks=True):
        real = os.path.realpath(here)
        depth = Path(here).relative_to(folder).parts
        if real in seen or len(depth) > 8:
            folders.clear()
            continue
        seen.add(real)
        if skills:
            found += [Path(here) / "SKILL.md"] if len(depth) == 1 and "SKILL.md" in files else []
            if depth:
                folders.clear()
        else:
            found += [Path(here) / name for name in files if name.endswith(".md")]
        folders.sort()
    return found


# Claude Code (2.1.328) has two readings of front matter: up to the first `---` anywhere, and
# up to the first line that is `---`. Both are read here, after a byte-order mark.
CLAUDE_CODE_FRONT_MATTER = (
    re.compile(r"---\s*\n([\s\S]*?)---\s*\n?"),
    re.compile(r"---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|\Z)"),
)


def _front_matters(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(errors="replace").removeprefix("\ufeff")
    except OSError:
        return []
    readings: list[dict[str, Any]] = []
    for pattern in CLAUDE_CODE_FRONT_MATTER:
        found = pattern.match(text)
        if not found:
            continue
        try:
            matter = yaml.safe_load(found.group(1))
        except yaml.YAMLError:
            matter = {"unread": hashlib.sha256(found.group(1).strip().encode()).hexdigest()}
        if isinstance(matter, dict) and matter and matter not in readings:
            readings.append(matter)
    return readings


def gemini_cli_settings(project: Path) -> list[Path]:
    """The project's, the user's, and the system's settings and defaults (Gemini CLI's own
    rule: a variable naming each, else /etc/gemini-cli/)."""
    system = Path(os.environ.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or GEMINI_SYSTEM_SETTINGS)
    defaults = os.environ.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
    return [
        project / ".gemini" / "settings.json",
        gemini_home() / "settings.json",
        system,
        Path(defaults) if defaults else system.parent / "system-defaults.json",
    ]


GEMINI_SYSTEM_SETTINGS = Path("/etc/gemini-cli/settings.json")
CODEX_SYSTEM_FOLDER = Path("/etc/codex")


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def _codex_project_folders(project: Path) -> list[Path]:
    """The project's folder and, inside a project root (a folder with `.git`, or with one of
    the user's `project_root_markers`), each folder above it up to that root: Codex reads the
    `.codex/` of each (a folder above, once trusted)."""
    markers = toml_table(codex_home() / "config.toml").get("project_root_markers", [".git"])
    markers = [m for m in markers if isinstance(m, str)] if isinstance(markers, list) else []
    if any((project / marker).exists() for marker in markers):
        return [project]
    above = []
    for folder in project.resolve().parents:
        above.append(folder)
        if any((folder / marker).exists() for marker in markers):
            return [project, *above]
    return [project]


def codex_folders(project: Path) -> list[Path]:
    """The folders of Codex's `hooks.json` and `config.toml`: the project's (and those above
    it in its repository), the user's."""
    return [*(folder / ".codex" for folder in _codex_project_folders(project)), codex_home()]


def codex_config_files(project: Path) -> list[Path]:
    """Every `config.toml` Codex may read: each folder's, a profile's own file in the user's
    folder (`--profile NAME` reads `NAME.config.toml`), the system's and its managed one."""
    return [
        *(folder / "config.toml" for folder in codex_folders(project)),
        *sorted(codex_home().glob("*.config.toml")),
        CODEX_SYSTEM_FOLDER / "config.toml",
        CODEX_SYSTEM_FOLDER / "managed_config.toml",
    ]


def codex_hook_tables(project: Path) -> list[tuple[Path, object]]:
    """Codex's hooks outside `config.toml`: each folder's `hooks.json`, and the managed hooks
    of /etc/codex/requirements.toml, which run with no trust step."""
    tables: list[tuple[Path, object]] = []
    for folder in codex_folders(project):
        path = folder / "hooks.json"
        tables.append((path, json_object(path).get("hooks")))
    requirements = CODEX_SYSTEM_FOLDER / "requirements.toml"
    tables.append((requirements, toml_table(requirements).get("hooks")))
    return tables


class HookHazard(Exception):
    """A file that must be fixed before fluidbox's hook can be relied on."""


def _environment_hazards(path: Path, env: object) -> Iterator[str]:
    if isinstance(env, dict):
        for name in SHELL_STARTUP_VARIABLES:
            if name in env:
                yield f"{path}: env sets {name}, which runs code in the hook's shell before it"
        for name in RUN_VARIABLES:
            if name in env:
                yield f"{path}: env sets {name}: the hook would ask as whichever run it names"
        for name in CLAUDE_CODE_SHELL_VARIABLES:
            if name == "CLAUDE_ENV_FILE" and name in env:
                yield (
                    f"{path}: env sets {name}: Claude Code sources that script before each "
                    "command fluidbox allowed, with no call to the hook"
                )
            elif name in env:
                yield (
                    f"{path}: env sets {name}: Claude Code runs every command through it, "
                    "the hook's own too, which it could answer in fluidbox's place"
                )
        for name in env:
            if name in PROGRAM_STARTUP_VARIABLES or str(name).startswith(PROGRAM_STARTUP_PREFIXES):
                yield (
                    f"{path}: env sets {name}, which the CLI hands every shell command it runs: "
                    "a command fluidbox allowed could run other code"
                )


def _dotenv_hazards(path: Path, cli: str = "Gemini CLI") -> Iterator[str]:
    """A `.env` file the CLI loads into its environment, the hook's included, for each variable
    not already set: Gemini CLI a trusted project's (or a folder's above it, or the user's),
    Codex its user folder's."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return
    for line in lines:
        match = _DOTENV_NAME.match(line)
        name = match.group(1) if match else ""
        if name in RUN_VARIABLES:
            yield (
                f"{path}: sets {name}, which {cli} hands the hook when it is not exported: the "
                "hook would ask as whichever run it names"
            )
        elif name in SHELL_STARTUP_VARIABLES:
            yield (
                f"{path}: sets {name}, which {cli} hands every shell command it runs: code "
                "would run before each command fluidbox allowed"
            )
        elif name in PROGRAM_STARTUP_VARIABLES or name.startswith(PROGRAM_STARTUP_PREFIXES):
            yield (
                f"{path}: sets {name}, which {cli} hands every shell command it runs: a "
                "command fluidbox allowed could run other code"
            )
        elif cli == "Gemini CLI" and name in GEMINI_FOLDER_VARIABLES:
            yield (
                f"{path}: sets {name}, which moves the folders Gemini CLI reads its settings, "
                "trust and extensions from past what fluidbox reads"
            )


def gemini_dotenv_files(project: Path) -> list[Path]:
    """The `.env` files Gemini CLI may load: the project's and each folder's above it (its
    `.gemini/.env` first), the user's."""
    folders = [project, *project.resolve().parents]
    files = [f / name for f in folders for name in (".gemini/.env", ".env")]
    return [*files, gemini_home() / ".env", Path.home() / ".env"]


def _other_pre_tool_hooks(
    path: Path,
    hooks: object,
    events: tuple[str, ...],
    rewritten: str | None = None,
    is_ours: Callable[[str], bool] | None = None,
) -> Iterator[str]:
    """Hooks that run before a tool beside fluidbox's: one can rewrite the call after fluidbox
    decided it (Claude Code applies a hook's `updatedInput` to the call that runs), or allow
    what fluidbox never saw. Only under the event agent_setup `rewritten` in this file is an
    entry naming fluidbox's hook let be: agent_setup replaces it. Anywhere else mentioning
    `runner.hook` proves nothing (a comment in a command would do). Asked by the hook itself
    (`is_ours`), only an entry whose every command is the one agent_setup wrote is let be."""
    if not isinstance(hooks, dict):
        return
    for event in events:
        entries = hooks.get(event)
        for entry in entries if isinstance(entries, list) else ():
            commands = [
                hook.get("command")
                for hook in (entry.get("hooks") if isinstance(entry, dict) else None) or ()
                if isinstance(hook, dict)
            ]
            if is_ours is not None:
                if commands and all(isinstance(c, str) and is_ours(c) for c in commands):
                    continue
            elif event == rewritten and OUR_HOOK_MARK in json.dumps(entry):
                continue
            shown = ", ".join(repr(c) for c in commands if c) or json.dumps(entry)[:120]
            yield (
                f"{path}: hooks.{event} has a hook besides fluidbox's ({shown}); it runs before "
                "the tool too and can change the call after fluidbox decided it"
            )


# The keys of a hook entry as agent_setup writes it: another (Claude Code's `if`, say)
# would narrow the calls it is asked about.
OUR_HOOK_KEYS = {"type", "command", "timeout", "name", "env"}


def _our_hook_gone(
    files: list[tuple[Path, object]],
    event: str,
    is_ours: Callable[[str], bool] | None,
    expected: bool,
) -> Iterator[str]:
    """Asked by the hook agent_setup wrote: its entry for `event`, as written (every tool,
    nothing added), is in none of the files the CLI reads. A change that takes it
    away, or narrows it to some tools, leaves the next session (in Claude Code, the rest of
    this one) asking no one."""
    if is_ours is None or not expected:
        return
    for _, hooks in files:
        entries = hooks.get(event) if isinstance(hooks, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            inner = entry.get("hooks") if isinstance(entry, dict) else None
            if (
                entry.get("matcher", "*") in ("*", "")
                and isinstance(inner, list)
                and any(
                    isinstance(hook, dict)
                    and set(hook) <= OUR_HOOK_KEYS
                    and hook.get("type") == "command"
                    and isinstance(hook.get("command"), str)
                    and is_ours(hook["command"])
                    for hook in inner
                )
            ):
                return
    yield (
        f"{files[0][0]}: hooks.{event} no longer holds fluidbox's hook for every tool, as "
        "agent_setup wrote it: the CLI would run calls no one asked fluidbox about"
    )


def _token_for_other_servers(
    path: Path | str, servers: object, ours: str, endpoint: str, *, rewritten: bool = False
) -> Iterator[str]:
    """MCP server entries the CLI would send the run's token that are not fluidbox's endpoint:
    another server, or fluidbox's own pointed elsewhere (a file rewritten during the run; the
    CLI's next session sends the token there). Its entry in a file agent_setup is about to
    rewrite (`rewritten`) is let be."""
    if not isinstance(servers, dict):
        return
    for name, entry in servers.items():
        if TOKEN_ENV not in json.dumps(entry):
            continue
        if name != ours:
            yield (
                f"{path}: the MCP server {name!r} is sent the run's token (${TOKEN_ENV}); "
                "only fluidbox's may be"
            )
        elif not rewritten and not is_the_endpoint(entry, endpoint):
            yield (
                f"{path}: fluidbox's MCP server {name!r} is not its endpoint {endpoint} "
                f"({json.dumps(entry)[:160]}), and the CLI would send it the run's token"
            )


def claude_code_hazards(
    project: Path,
    server: str,
    mcp_url: str,
    *,
    shadows: bool = True,
    is_ours: Callable[[str], bool] | None = None,
    expect_our_hook: bool = False,
) -> Iterator[str]:
    hooks_read: list[tuple[Path, object]] = []
    for path in claude_code_settings(project):
        settings = json_object(path)
        hooks_read.append((path, settings.get("hooks")))
        if settings.get("disableAllHooks"):
            yield f"{path}: disableAllHooks turns every hook off, fluidbox's too"
        if settings.get("disableSkillShellExecution") is False:
            yield (
                f"{path}: disableSkillShellExecution is false: a skill's `!` commands would "
                "run with no call to the hook"
            )
        yield from _environment_hazards(path, settings.get("env"))
        yield from _other_pre_tool_hooks(
            path,
            settings.get("hooks"),
            ("PreToolUse", "PermissionRequest"),
            rewritten="PreToolUse" if path == project / ".claude" / "settings.json" else None,
            is_ours=is_ours,
        )
    for path in claude_code_managed_settings():
        if json_object(path).get("allowManagedHooksOnly"):
            yield (
                f"{path}: allowManagedHooksOnly runs only an administrator's hooks, not "
                "fluidbox's in the project's settings"
            )
    for path, _, matter in claude_code_front_matters(project):
        yield from _other_pre_tool_hooks(
            path, matter.get("hooks"), ("PreToolUse", "PermissionRequest"), is_ours=is_ours
        )
    for event in ("PreToolUse", "ConfigChange"):
        yield from _our_hook_gone(hooks_read, event, is_ours, expect_our_hook)
    mcp = project / ".mcp.json"
    setting_up = is_ours is None
    yield from _token_for_other_servers(
        mcp, json_object(mcp).get("mcpServers"), server, mcp_url, rewritten=setting_up
    )
    # The other files Claude Code reads servers from (the user's and local scopes, a folder's
    # above, the administrator's).
    for path, servers in claude_code_servers(project):
        if path != mcp:
            yield from _token_for_other_servers(path, servers, server, mcp_url)
    if shadows:
        yield from shadowing_servers("claude-code", project, server, mcp_url, rewritten=mcp)


def gemini_cli_hazards(
    project: Path,
    server: str,
    mcp_url: str,
    *,
    shadows: bool = True,
    is_ours: Callable[[str], bool] | None = None,
    expect_our_hook: bool = False,
) -> Iterator[str]:
    for dotenv in dict.fromkeys(gemini_dotenv_files(project)):
        yield from _dotenv_hazards(dotenv)
    hooks_read: list[tuple[Path, object]] = []
    for path in gemini_cli_settings(project):
        settings = json_object(path)
        hooks_read.append((path, settings.get("hooks")))
        yield from _other_pre_tool_hooks(
            path,
            settings.get("hooks"),
            ("BeforeTool",),
            rewritten="BeforeTool" if path == project / ".gemini" / "settings.json" else None,
            is_ours=is_ours,
        )
        yield from _token_for_other_servers(
            path,
            settings.get("mcpServers"),
            server,
            mcp_url,
            rewritten=is_ours is None and path == project / ".gemini" / "settings.json",
        )
        hooks_config = settings.get("hooksConfig")
        if not isinstance(hooks_config, dict):
            continue
        if hooks_config.get("enabled") is False:
            yield f"{path}: hooksConfig.enabled is false, which turns every hook off"
        disabled = hooks_config.get("disabled")
        for name in disabled if isinstance(disabled, list) else ():
            if isinstance(name, str) and (name == GEMINI_HOOK_NAME or OUR_HOOK_MARK in name):
                yield f"{path}: hooksConfig.disabled names fluidbox's hook ({name!r})"
    yield from _our_hook_gone(hooks_read, "BeforeTool", is_ours, expect_our_hook)


def codex_hazards(
    project: Path,
    server: str,
    mcp_url: str,
    *,
    shadows: bool = True,
    is_ours: Callable[[str], bool] | None = None,
    expect_our_hook: bool = False,
) -> Iterator[str]:
    ours = project / ".codex" / "config.toml"
    if shadows:
        yield from shadowing_servers("codex", project, server, mcp_url, rewritten=ours)
    yield from _dotenv_hazards(codex_home() / ".env", "Codex")
    hooks_read: list[tuple[Path, object]] = []
    for path, hooks in codex_hook_tables(project):
        hooks_read.append((path, hooks))
        yield from _other_pre_tool_hooks(
            path,
            hooks,
            ("PreToolUse", "PermissionRequest"),
            rewritten="PreToolUse" if path == project / ".codex" / "hooks.json" else None,
            is_ours=is_ours,
        )
    for path in codex_config_files(project):
        config = toml_table(path)
        hooks_read.append((path, config.get("hooks")))
        yield from _other_pre_tool_hooks(
            path, config.get("hooks"), ("PreToolUse", "PermissionRequest"), is_ours=is_ours
        )
        servers = config.get("mcp_servers")
        yield from _token_for_other_servers(
            path, servers, server, mcp_url, rewritten=is_ours is None and path == ours
        )
        # An entry of fluidbox's name with just these keys is rewritten by agent_setup; one
        # with more (a command, headers) is someone else's server.
        existing = servers.get(server) if isinstance(servers, dict) else None
        if isinstance(existing, dict) and set(existing) - {"url", "bearer_token_env_var"}:
            yield (
                f"{path}: [mcp_servers.{server}] is not fluidbox's MCP server at {mcp_url} "
                f"({json.dumps(existing)[:160]}); remove it and run this again"
            )
        tables = [("", config)]
        profiles = config.get("profiles")
        if isinstance(profiles, dict):
            tables += [(f"profiles.{n}.", p) for n, p in profiles.items() if isinstance(p, dict)]
        for prefix, table in tables:
            features = table.get("features")
            if isinstance(features, dict) and features.get("codex_hooks") is False:
                yield f"{path}: {prefix}features.codex_hooks = false turns every hook off"
            policy = table.get("shell_environment_policy")
            assigned = policy.get("set") if isinstance(policy, dict) else None
            for name in assigned if isinstance(assigned, dict) else ():
                if (
                    name in SHELL_STARTUP_VARIABLES
                    or name in PROGRAM_STARTUP_VARIABLES
                    or str(name).startswith(PROGRAM_STARTUP_PREFIXES)
                ):
                    yield (
                        f"{path}: {prefix}shell_environment_policy.set sets {name}, which Codex "
                        "hands every shell command it runs: code would run with each one"
                    )
    yield from _our_hook_gone(hooks_read, "PreToolUse", is_ours, expect_our_hook)


GEMINI_HOOK_NAME = "fluidbox"
# In every command agent_setup has written for the hook (`from runner.hook import main`, and
# before that `-m runner.hook`): how it finds its own entries to replace.
OUR_HOOK_MARK = "runner.hook"
HAZARDS = {
    "claude-code": claude_code_hazards,
    "codex": codex_hazards,
    "gemini-cli": gemini_cli_hazards,
}


def setup_hazards(
    agent: str,
    project: Path,
    server: str,
    mcp_url: str,
    *,
    shadows: bool = True,
    is_ours: Callable[[str], bool] | None = None,
    expect_our_hook: bool = False,
) -> list[str]:
    """Every setting that would keep fluidbox's hook from deciding, or send the run's token
    elsewhere, a line each; without the servers that shadow fluidbox's tools' names when
    `shadows` is false (the hook sends those calls to the gate itself). `expect_our_hook`:
    asked by a hook agent_setup wrote into these files, which must still hold it."""
    try:
        found = HAZARDS[agent](
            project,
            server,
            mcp_url,
            shadows=shadows,
            is_ours=is_ours,
            expect_our_hook=expect_our_hook,
        )
        return list(found)
    except HookHazard as error:
        return [str(error)]
