"""Another MCP server the CLI could call under the names of fluidbox's own tools.

Claude Code and Codex call a tool `mcp__<server>__<tool>`: a server the user (or a repository)
added as `fluidbox__tracker` has a `list_issues` named `mcp__fluidbox__tracker__list_issues`,
as fluidbox's own `tracker__list_issues` is. The hook left every call of that name to
fluidbox's endpoint; with the real Claude Code and Codex the call went to the other server,
and fluidbox never saw it (no record, no approval for a call the policy holds at ASK). Now
such a call goes to the gate under its own name, which denies it as not frozen, and
agent_setup refuses to set up beside such a server.
"""

from __future__ import annotations

import json

import pytest

from governance.models import ToolCall
from governance.services.bundles import bundle_import
from runner.agent_setup import hook_command
from runner.cli_started_commands import fingerprints
from tests.agents.agent_setup_command import refused_agent_setup
from tests.agents.test_hook import BUNDLE, bash, claude_decision, hook
from tests.runner_live.conftest import create_run

pytestmark = [pytest.mark.slow, pytest.mark.long]

OTHER = {"type": "http", "url": "http://127.0.0.1:9/mcp"}


def _claude_code_configs(project, url) -> dict[str, tuple[str, dict]]:
    """Where a shadowing server can be configured: file, then its content."""
    fluidbox = {"type": "http", "url": f"{url}/v1/mcp"}
    return {
        "local scope": (
            ".claude.json",
            {"projects": {str(project): {"mcpServers": {"fluidbox__tracker": OTHER}}}},
        ),
        "user scope": (".claude.json", {"mcpServers": {"fluidbox..tracker": OTHER}}),
        "fluidbox's name, another address": (
            ".claude.json",
            {"projects": {str(project): {"mcpServers": {"fluidbox": OTHER}}}},
        ),
        "the project's .mcp.json": (
            "project/.mcp.json",
            {"mcpServers": {"fluidbox": fluidbox, "fluidbox__tracker": OTHER}},
        ),
        # Claude Code replaces each UTF-16 unit it does not keep: an emoji is `__`
        "an emoji in the name": (
            "project/.mcp.json",
            {"mcpServers": {"fluidbox": fluidbox, "fluidbox\U0001f600tracker": OTHER}},
        ),
        # a program to run under fluidbox's name, carrying fluidbox's URL beside it
        "fluidbox's name, a program": (
            "project/.mcp.json",
            {"mcpServers": {"fluidbox": {**fluidbox, "command": "python3", "args": ["x.py"]}}},
        ),
        "a parent folder's .mcp.json": (
            "parent:.mcp.json",
            {"mcpServers": {"fluidbox__tracker": OTHER}},
        ),
    }


@pytest.mark.parametrize(
    "where",
    [
        "local scope",
        "user scope",
        "fluidbox's name, another address",
        "the project's .mcp.json",
        "an emoji in the name",
        "fluidbox's name, a program",
        "a parent folder's .mcp.json",
    ],
)
def test_a_tool_name_another_claude_code_server_shares_goes_to_the_gate(
    fluidbox_server, demo_org, operator, tmp_path, where
):
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(operator, bundles=["claude-code"], connections=["tracker"])
    url = fluidbox_server.url
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {"HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
    call = {**bash("", "toolu_own"), "tool_name": "mcp__fluidbox__tracker__create_issue"}
    call["tool_input"] = {"title": "x"}
    # With only fluidbox's server configured, the endpoint decides the call: no record here.
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"fluidbox": {"type": "http", "url": f"{url}/v1/mcp"}}})
    )
    decision, _ = claude_decision(
        hook("claude-code", call, url=url, run_id=run_id, token=token, env=env)
    )
    assert decision == "allow"
    assert not ToolCall.objects.filter(run_id=run_id, tool_call_id="toolu_own").exists()

    # Another project's local servers are not this session's: still the endpoint's.
    elsewhere = {"projects": {str(tmp_path / "other"): {"mcpServers": {"fluidbox": OTHER}}}}
    (home / ".claude.json").write_text(json.dumps(elsewhere))
    decision, _ = claude_decision(
        hook("claude-code", call, url=url, run_id=run_id, token=token, env=env)
    )
    assert decision == "allow"

    path, content = _claude_code_configs(project, url)[where]
    if path.startswith("parent:"):
        target = tmp_path / path.removeprefix("parent:")
    else:
        target = home / path if path.startswith(".") else tmp_path / path
    target.write_text(json.dumps(content))
    shadowed = {**call, "tool_use_id": "toolu_shadowed"}
    # A program among them is one the CLI starts by itself: known here, as if it had been
    # there at setup (tests/agents/test_hook_started_commands.py has it appear later).
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        known = fingerprints("claude-code", project)
    # and the hook's own entries, as agent_setup writes them with those fingerprints
    ours = [
        {
            "matcher": "*",
            "hooks": [
                {
                    "type": "command",
                    "command": hook_command("claude-code", url, run_id, "fluidbox", known),
                }
            ],
        }
    ]
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": ours, "ConfigChange": ours}})
    )

    decision, reason = claude_decision(
        hook(
            "claude-code",
            shadowed,
            url=url,
            run_id=run_id,
            token=token,
            env=env,
            options=("--known-commands", ",".join(known)),
        )
    )

    assert decision == "deny" and "not in this run's frozen tool set" in reason
    recorded = ToolCall.objects.get(run_id=run_id, tool_call_id="toolu_shadowed")
    assert (recorded.tool, recorded.decision) == ("mcp__fluidbox__tracker__create_issue", "deny")


def test_a_codex_server_named_like_fluidbox_s_tools_sends_them_to_the_gate(
    fluidbox_server, demo_org, operator, tmp_path
):
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(operator, bundles=["claude-code"], connections=["tracker"])
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".codex").mkdir(parents=True)
    project.mkdir()
    # in the repository's own configuration, a folder above the project Codex runs in
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(
        '[mcp_servers.fluidbox__tracker]\nurl = "http://127.0.0.1:9/mcp"\n'
    )
    codex = {
        "session_id": "s-codex",
        "cwd": str(project),
        "tool_name": "mcp__fluidbox__tracker__create_issue",
        "tool_input": {"title": "x"},
        "tool_use_id": "call_shadowed",
    }
    env = {"HOME": str(home), "CODEX_HOME": str(home / ".codex")}

    decision, _ = claude_decision(
        hook(
            "codex",
            codex,
            url=fluidbox_server.url,
            run_id=run_id,
            token=token,
            env=env,
            cwd=project,
        )
    )

    assert decision == "deny"
    assert ToolCall.objects.get(run_id=run_id, tool_call_id="call_shadowed").decision == "deny"


@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_agent_setup_refuses_to_set_up_beside_a_shadowing_server(fluidbox_server, tmp_path, cli):
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".codex").mkdir(parents=True)
    project.mkdir()
    if cli == "claude-code":
        (home / ".claude.json").write_text(json.dumps({"mcpServers": {"fluidbox__x": OTHER}}))
        shown = f"{home / '.claude.json'}: the MCP server 'fluidbox__x' names its tools"
    else:
        (home / ".codex" / "config.toml").write_text(
            '[mcp_servers.fluidbox__x]\nurl = "http://127.0.0.1:9/mcp"\n'
        )
        shown = f"{home / '.codex' / 'config.toml'}: the MCP server 'fluidbox__x' names"

    refusal = refused_agent_setup(cli, fluidbox_server.url, "r1", project, home=home)

    assert shown in refusal


def _claude_code_launches(url: str) -> dict[str, tuple[str, ...]]:
    """How a shadowing server can be given on Claude Code's command line."""
    fluidbox = {"type": "http", "url": f"{url}/v1/mcp"}
    shadow = json.dumps({"mcpServers": {"fluidbox__tracker": OTHER}})
    return {
        "JSON": ("--strict-mcp-config", "--mcp-config", shadow),
        "a file, from the CLI's folder": ("--mcp-config=servers.json",),
        "the second of two values": (
            "--mcp-config",
            json.dumps({"mcpServers": {"fluidbox": fluidbox}}),
            shadow,
        ),
        "an unreadable value": ("--mcp-config", '{"mcpServers": '),
    }


@pytest.mark.parametrize(
    "launch",
    ["JSON", "a file, from the CLI's folder", "the second of two values", "an unreadable value"],
)
def test_a_server_given_on_claude_code_s_command_line_sends_the_call_to_the_gate(
    fluidbox_server, demo_org, operator, tmp_path, launch
):
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(operator, bundles=["claude-code"], connections=["tracker"])
    url = fluidbox_server.url
    project = tmp_path / "project"
    project.mkdir()
    (project / "servers.json").write_text(json.dumps({"mcpServers": {"fluidbox__tracker": OTHER}}))
    env = {"HOME": str(tmp_path), "CLAUDE_PROJECT_DIR": str(project)}
    call = {**bash("", "toolu_own"), "tool_name": "mcp__fluidbox__tracker__create_issue"}
    call["tool_input"] = {"title": "x"}
    # Launched with fluidbox's own server alone, the call is the endpoint's: no record here.
    own = json.dumps({"mcpServers": {"fluidbox": {"type": "http", "url": f"{url}/v1/mcp"}}})
    decision, _ = claude_decision(
        hook(
            "claude-code",
            call,
            url=url,
            run_id=run_id,
            token=token,
            env=env,
            cwd=project,
            launched_with=("-p", "--mcp-config", own, "--model", "m"),
        )
    )
    assert decision == "allow"
    assert not ToolCall.objects.filter(run_id=run_id, tool_call_id="toolu_own").exists()

    shadowed = {**call, "tool_use_id": "toolu_launched"}
    decision, reason = claude_decision(
        hook(
            "claude-code",
            shadowed,
            url=url,
            run_id=run_id,
            token=token,
            env=env,
            cwd=project,
            launched_with=_claude_code_launches(url)[launch],
        )
    )

    assert decision == "deny" and "not in this run's frozen tool set" in reason
    recorded = ToolCall.objects.get(run_id=run_id, tool_call_id="toolu_launched")
    assert (recorded.tool, recorded.decision) == ("mcp__fluidbox__tracker__create_issue", "deny")


@pytest.mark.parametrize(
    "override",
    [
        'mcp_servers.fluidbox__tracker.url="http://127.0.0.1:9/mcp"',
        'mcp_servers.fluidbox.command="python3"',
        'mcp_servers={fluidbox__tracker={url="http://127.0.0.1:9/mcp"}}',
    ],
)
def test_a_server_given_on_codex_s_command_line_sends_the_call_to_the_gate(
    fluidbox_server, demo_org, operator, tmp_path, override
):
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(operator, bundles=["claude-code"], connections=["tracker"])
    url = fluidbox_server.url
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".codex").mkdir(parents=True)
    project.mkdir()
    (home / ".codex" / "config.toml").write_text(f'[mcp_servers.fluidbox]\nurl = "{url}/v1/mcp"\n')
    env = {"HOME": str(home), "CODEX_HOME": str(home / ".codex")}

    def codex_decision(tool_use_id: str, *launched_with: str) -> str:
        codex = {
            "session_id": "s-codex",
            "cwd": str(project),
            "tool_name": "mcp__fluidbox__tracker__create_issue",
            "tool_input": {"title": "x"},
            "tool_use_id": tool_use_id,
        }
        answer = hook(
            "codex",
            codex,
            url=url,
            run_id=run_id,
            token=token,
            env=env,
            cwd=project,
            launched_with=launched_with,
        )
        return claude_decision(answer)[0]

    # Other overrides (and a `-c` of a shell's script) leave the call to the endpoint.
    assert (
        codex_decision("call_own", "exec", "-c", 'model="o3"', "--config=sandbox_mode=x") == "allow"
    )
    assert not ToolCall.objects.filter(run_id=run_id, tool_call_id="call_own").exists()

    assert codex_decision("call_launched", "exec", "-c", override) == "deny"
    assert ToolCall.objects.get(run_id=run_id, tool_call_id="call_launched").decision == "deny"
