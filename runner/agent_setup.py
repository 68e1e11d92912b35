"""Put an agent CLI behind fluidbox by configuration: its pre-tool hook and its MCP server.

    python -m runner.agent_setup {claude-code,codex,gemini-cli} --url URL [--run RUN_ID]
        [--dir PROJECT] [--trust [--codex PATH]]

Writes into the project (merging with what is there) and prints every file it wrote:

- claude-code: `.claude/settings.json` (a `PreToolUse` and a `ConfigChange` hook for every
  tool, bypass-permissions mode and skills' shell lines disabled, the MCP server enabled) and
  `.mcp.json` (fluidbox's MCP server);
- codex: `.codex/hooks.json` (a `PreToolUse` hook) and `.codex/config.toml` (the MCP server);
- gemini-cli: `.gemini/settings.json` (a `BeforeTool` hook, the MCP server, and the run
  token's variable let through the CLI's redaction of the hook's environment).

The run token is never written: the MCP entries name the environment variable
`FLUIDBOX_RUN_TOKEN`, which the CLI expands, and the hook reads it from its environment.
Without `--run` the hook reads the run's id from `FLUIDBOX_RUN_ID` too, so the files stay
the same from run to run (Codex asks to trust a hook again whenever its command changes).

It writes nothing when a setting it finds would switch the hook off (`disableAllHooks`,
`hooksConfig.enabled = false`, `features.codex_hooks = false`, another pre-tool hook, or
another MCP server sent the run's token; `runner.setup_hazards`). The commands the CLI starts
by itself that it finds (hooks on other events, a status line, a local MCP server, plugins,
extensions, the shell's start-up files …) are
written into the hook's command line as fingerprints: the hook denies while another is there
(`runner.cli_started_commands`).

Codex CLI and Gemini CLI ignore these files until their user trusts the project (Codex its
hook too), and then run every call unchecked. `--trust` takes that step in the CLI's user
configuration (`runner.cli_trust`); without it the steps are printed.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from runner import cli_started_commands, cli_trust
from runner.hook import RUN_ENV, TOKEN_ENV
from runner.mcp_shadows import mcp_endpoint
from runner.setup_hazards import (
    GEMINI_HOOK_NAME,
    OUR_HOOK_MARK,
    SHELL_STARTUP_VARIABLES,
    HookHazard,
    setup_hazards,
)

# The hook waits up to its --max-wait for a human; the CLI must give it longer than that,
# or it would give up on the hook (and a CLI that shrugs off a timed-out hook would run
# the call).
HOOK_MAX_WAIT = 290
HOOK_TIMEOUT_SECONDS = 330
CONFIG_CHANGE_TIMEOUT_SECONDS = 60


RUNNER_ROOT = Path(__file__).resolve().parents[1]


def base_url(value: str) -> str:
    """`--url`: fluidbox's base URL, as the hook and the CLI's MCP client need it. Anything
    else would be written as given, and the hook would then deny every call."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (raises on a port that is not a number or out of range)
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or parts.query
        or parts.fragment
        or any(c.isspace() or not c.isprintable() or c in '"\\' for c in value)
    ):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not fluidbox's base URL: give it as http://HOST:PORT or "
            "https://HOST[/PREFIX] (what $FLUIDBOX_URL holds in the README)"
        )
    if parts.path.rstrip("/").endswith(("/v1", "/v1/mcp")):
        raise argparse.ArgumentTypeError(
            f"{value!r} names an endpoint: give fluidbox's base URL "
            f"({value[: value.rindex('/v1')]!r}); the hook and the MCP entry add the paths"
        )
    return value


def run_id(value: str) -> str:
    """`--run`: a run's id, as `POST /v1/runs` answered it. An empty one (`--run "$RUN_ID"`
    with the variable unset) would otherwise be read as no `--run` at all."""
    if not value.strip() or any(c.isspace() or not c.isprintable() for c in value):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a run id: give the `id` of the answer to POST /v1/runs (is "
            f"$RUN_ID set?), or leave --run out to have the hook read ${RUN_ENV} at each call"
        )
    return value


def hook_command(
    dialect: str, url: str, run_id: str | None, server: str, known: Iterable[str] = ()
) -> str:
    """The shell command line the CLI runs. If the hook cannot even start (no Python, no
    package), `exit 2` makes the CLI block the call rather than fall back to asking locally.
    `known`: the fingerprints of the commands the CLI starts by itself that were there at
    setup (`runner.cli_started_commands`); the hook denies while another one is there.

    Python runs isolated (`-I`): the project's directory is not on its path (a `runner/`
    package there, shipped by the repository or written by the agent, would be imported
    instead of fluidbox's) and no `PYTHON*` variable of the environment is read."""
    run = ["--run", run_id] if run_id else []
    entry = (
        f"import sys; sys.path.insert(0, {json.dumps(str(RUNNER_ROOT))}); "
        "from runner.hook import main; sys.exit(main())"
    )
    hook = shlex.join(
        [
            sys.executable,
            "-I",
            "-c",
            entry,
            dialect,
            "--url",
            url,
            *run,
            "--mcp-server",
            server,
            "--max-wait",
            str(HOOK_MAX_WAIT),
            "--known-commands",
            ",".join(sorted(known)),
        ]
    )
    # Exit 2 is the hook's own refusal (a settings change), its reason already on stderr.
    return f'{hook} || {{ [ $? = 2 ] || echo "fluidbox hook could not run; denied" >&2; exit 2; }}'


def _as_dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _merge_json(path: Path, update) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text()) if path.exists() else {}
    except ValueError as error:
        raise SystemExit(f"{path} is not JSON ({error}); not touching it") from None
    if not isinstance(data, dict):
        raise SystemExit(f"{path} is not a JSON object; not touching it")
    update(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return data


def _with_hook(
    entries: list, command: str, *, timeout: int, timeout_unit_ms: bool, **extra: Any
) -> list:
    kept = [e for e in entries if OUR_HOOK_MARK not in json.dumps(e)]  # replace ours only
    hook = {"type": "command", "command": command, **extra}
    hook["timeout"] = timeout * 1000 if timeout_unit_ms else timeout
    return [{"matcher": "*", "hooks": [hook]}, *kept]


def setup_claude_code(
    project: Path, url: str, run_id: str | None, server: str, known: Iterable[str] = ()
) -> dict[Path, Any]:
    command = hook_command("claude-code", url, run_id, server, known)

    def settings(data: dict) -> None:
        hooks = data.setdefault("hooks", {})
        hooks["PreToolUse"] = _with_hook(
            hooks.get("PreToolUse", []),
            command,
            timeout=HOOK_TIMEOUT_SECONDS,
            timeout_unit_ms=False,
        )
        # Claude Code applies a settings file changed during a session about a second later
        # (2.1.328; `disableAllHooks` would switch this hook off in the session it gates).
        # The hook refuses a change that brings what it would deny calls for.
        hooks["ConfigChange"] = _with_hook(
            hooks.get("ConfigChange", []),
            command,
            timeout=CONFIG_CHANGE_TIMEOUT_SECONDS,
            timeout_unit_ms=False,
        )
        data.setdefault("permissions", {})["disableBypassPermissionsMode"] = "disable"
        # A skill's `!` lines run when the skill is loaded, past every hook (2.1.328).
        data["disableSkillShellExecution"] = True
        enabled = data.setdefault("enabledMcpjsonServers", [])
        if server not in enabled:
            enabled.append(server)

    def mcp(data: dict) -> None:
        data.setdefault("mcpServers", {})[server] = {
            "type": "http",
            "url": mcp_endpoint(url),
            "headers": {"Authorization": f"Bearer ${{{TOKEN_ENV}}}"},
        }

    return {
        project / ".claude" / "settings.json": _merge_json(
            project / ".claude" / "settings.json", settings
        ),
        project / ".mcp.json": _merge_json(project / ".mcp.json", mcp),
    }


def setup_gemini_cli(
    project: Path, url: str, run_id: str | None, server: str, known: Iterable[str] = ()
) -> dict[Path, Any]:
    command = hook_command("gemini-cli", url, run_id, server, known)

    def settings(data: dict) -> None:
        hooks = data.setdefault("hooks", {})
        # Named, so a setting that disables it by name is recognised (runner.setup_hazards);
        # its shell starts with nothing a project's `.env` put in the CLI's environment.
        hooks["BeforeTool"] = _with_hook(
            hooks.get("BeforeTool", []),
            command,
            timeout=HOOK_TIMEOUT_SECONDS,
            timeout_unit_ms=True,
            name=GEMINI_HOOK_NAME,
            env=dict.fromkeys(SHELL_STARTUP_VARIABLES, ""),
        )
        data.setdefault("mcpServers", {})[server] = {
            "httpUrl": mcp_endpoint(url),
            "headers": {"Authorization": f"Bearer ${TOKEN_ENV}"},
        }
        # Gemini CLI strips variables named like secrets (`*TOKEN*`) from a hook's
        # environment when it redacts (on GitHub Actions, or when a setting asks): the hook
        # would have no token and deny every call. This variable is let through.
        redaction = data.setdefault("security", {}).setdefault("environmentVariableRedaction", {})
        allowed = redaction.setdefault("allowed", [])
        if TOKEN_ENV not in allowed:
            allowed.append(TOKEN_ENV)

    path = project / ".gemini" / "settings.json"
    return {path: _merge_json(path, settings)}


def setup_codex(
    project: Path, url: str, run_id: str | None, server: str, known: Iterable[str] = ()
) -> dict[Path, Any]:
    command = hook_command("codex", url, run_id, server, known)

    def hooks(data: dict) -> None:
        section = data.setdefault("hooks", {})
        section["PreToolUse"] = _with_hook(
            section.get("PreToolUse", []),
            command,
            timeout=HOOK_TIMEOUT_SECONDS,
            timeout_unit_ms=False,
        )

    config = project / ".codex" / "config.toml"
    text = config.read_text() if config.exists() else ""
    endpoint = mcp_endpoint(url)
    block = f'[mcp_servers.{server}]\nurl = "{endpoint}"\nbearer_token_env_var = "{TOKEN_ENV}"\n'
    # An entry of that name as agent_setup writes it (an earlier URL, or a repository's URL)
    # is replaced; written otherwise, it is left for the user (TOML is not rewritten here).
    written_before = re.compile(
        rf"^\[mcp_servers\.{re.escape(server)}\]\n"
        r'(?:(?:url|bearer_token_env_var) = "[^"\n]*"\n?){2}',
        re.MULTILINE,
    )
    if written_before.search(text):
        text = written_before.sub(lambda _: block, text, count=1)
    elif server in _as_dict(tomllib.loads(text).get("mcp_servers")):
        raise SystemExit(
            f"{config}: [mcp_servers.{server}] is not written as agent_setup writes it; "
            "remove it and run this again (nothing was written)"
        )
    else:
        text += ("\n" if text and not text.endswith("\n") else "") + block
    hooks_path = project / ".codex" / "hooks.json"
    written = {hooks_path: _merge_json(hooks_path, hooks)}
    config.write_text(text)
    written[config] = text
    return written


SETUPS = {"claude-code": setup_claude_code, "codex": setup_codex, "gemini-cli": setup_gemini_cli}

# What a CLI needs before it reads these files at all. Without it the CLI runs every call
# unchecked and says (almost) nothing: found with the real CLIs (tests/agents). `--trust`
# takes the step (runner/cli_trust.py); without it, or when it fails, the user is told.
TRUST_STEP = {
    "codex": (
        "Codex reads .codex/ only in a trusted project, and runs the hook only once it is",
        'trusted too: trust the project (codex exec --trust, or trust_level = "trusted" for',
        "it in ~/.codex/config.toml) and the hook (/hooks -> Trust all and continue), or run",
        "this again with --trust.",
    ),
    "gemini-cli": (
        "Gemini CLI reads .gemini/settings.json only in a trusted folder",
        "(the folder in ~/.gemini/trustedFolders.json, or GEMINI_CLI_TRUST_WORKSPACE=true),",
        "or run this again with --trust.",
    ),
}
ALWAYS_SAY = {
    "codex": (
        "Codex asks to trust the hook again whenever its command changes (written without",
        "--run, it stays the same from run to run, until the commands Codex starts by",
        "itself, its notify program or another hook, change).",
    ),
    "gemini-cli": (
        "Never start it with --skip-trust: it then runs without the hook and the MCP server.",
    ),
}


def take_trust_step(
    agent: str, project: Path, args: argparse.Namespace, known: list[str]
) -> list[str]:
    if agent == "codex":
        command = hook_command("codex", args.url, args.run, args.server_name, known)
        return cli_trust.trust_codex(project, command, args.codex)
    return cli_trust.trust_gemini(project)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m runner.agent_setup", description=__doc__.split("\n")[0]
    )
    parser.add_argument("agent", choices=sorted(SETUPS))
    parser.add_argument(
        "--url", required=True, type=base_url, help="fluidbox's base URL (http://HOST:PORT)"
    )
    parser.add_argument(
        "--run",
        type=run_id,
        help=f"the run id (default: none written; the hook then reads ${RUN_ENV} at each call)",
    )
    parser.add_argument("--dir", default=".", help="the project folder (default: here)")
    parser.add_argument("--server-name", default="fluidbox", help="the MCP server's name")
    parser.add_argument(
        "--trust",
        action="store_true",
        help="codex, gemini-cli: also trust the project (and, for Codex, fluidbox's hook) in "
        "the CLI's user configuration, as its own trust prompt would",
    )
    parser.add_argument("--codex", help="the Codex CLI executable for --trust (default: codex)")
    args = parser.parse_args(argv)
    if args.trust and args.agent not in TRUST_STEP:
        parser.error(f"--trust: {args.agent} has no trust step to take")
    project = Path(args.dir).resolve()
    hazards = setup_hazards(args.agent, project, args.server_name, mcp_endpoint(args.url))
    try:
        known = cli_started_commands.fingerprints(args.agent, project)
    except HookHazard as error:  # a plugin's or extension's file that is not JSON
        hazards.append(str(error))
    if hazards:
        print(f"not set up: {args.agent} would not run fluidbox's hook:", file=sys.stderr)
        for line in hazards:
            print(f"  {line}", file=sys.stderr)
        print("Remove these settings and run this again; nothing was written.", file=sys.stderr)
        return 1
    written = SETUPS[args.agent](project, args.url, args.run, args.server_name, known)
    for path, content in written.items():
        print(f"wrote {path}:")
        print(content if isinstance(content, str) else json.dumps(content, indent=2))
    status = 0
    if args.trust:
        try:
            print("\n".join(take_trust_step(args.agent, project, args, known)))
        except cli_trust.TrustNotTaken as error:
            print(f"\nnot trusted: {error}", file=sys.stderr)
            status = 1
    exports = f"export {TOKEN_ENV}=<the run's session token>"
    if not args.run:
        exports += f" {RUN_ENV}=<the run's id>"
    print(f"\nBefore starting the agent: {exports}")
    if status or not args.trust:
        for line in TRUST_STEP.get(args.agent, ()):
            print(line)
    for line in ALWAYS_SAY.get(args.agent, ()):
        print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
