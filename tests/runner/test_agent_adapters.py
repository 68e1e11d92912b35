"""Adapters: a plain toolbox, and claude-agent-sdk permissions that always go through the gate."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from runner import BypassRefused, GatedToolbox, GatePermission, ToolRunner, claude_agent_options
from runner.adapters import translate_sdk_call


@pytest.fixture
def permission(fake_gate) -> GatePermission:
    return GatePermission(fake_gate.client(), session_id="sdk-session", total_wait=0.5)


def test_the_toolbox_declares_the_tools_and_routes_calls_through_the_gate(
    fake_gate, workspace
) -> None:
    toolbox = GatedToolbox(ToolRunner(fake_gate.client(), workspace))
    assert [tool["name"] for tool in toolbox.definitions()] == [
        "read_file",
        "write_file",
        "list_dir",
        "run_command",
    ]
    fake_gate.verdicts["run_command"] = "deny"
    denied = toolbox.call("run_command", {"command": "rm -rf ."})
    written = toolbox.call(
        "write_file", {"path": "notes.md", "content": "# notes"}, tool_call_id="t1"
    )
    assert denied.is_error and not written.is_error
    bodies = [request["body"] for request in fake_gate.requests_to("/permission")]
    assert {body["session_id"] for body in bodies} == {toolbox.session_id}
    assert bodies[0]["tool_call_id"].startswith("call-") and bodies[1]["tool_call_id"] == "t1"


def test_can_use_tool_denies_what_the_gate_denies(fake_gate, permission) -> None:
    fake_gate.verdicts["run_command"] = "deny"
    context = SimpleNamespace(tool_use_id="toolu_01", suggestions=[])
    denied = asyncio.run(permission.can_use_tool("Bash", {"command": "rm -rf /"}, context))
    allowed = asyncio.run(
        permission.can_use_tool("Read", {"file_path": "/workspace/a.txt"}, {"tool_use_id": "t2"})
    )
    assert denied == {
        "behavior": "deny",
        "message": "Denied by policy rule run_command:*; not run.",
        "interrupt": False,
    }
    assert allowed == {"behavior": "allow"}
    asked = [request["body"] for request in fake_gate.requests_to("/permission")]
    assert asked[0]["tool"] == "run_command" and asked[0]["arguments"] == {"command": "rm -rf /"}
    assert asked[0]["tool_call_id"] == "toolu_01" and asked[0]["session_id"] == "sdk-session"
    assert asked[1]["tool"] == "read_file" and asked[1]["arguments"] == {"path": "/workspace/a.txt"}


def test_the_pre_tool_use_hook_asks_the_gate_for_every_tool(fake_gate, permission) -> None:
    fake_gate.verdicts["Edit"] = "deny"  # not in the frozen set: the real gate denies it too
    hook_input = {
        "hook_event_name": "PreToolUse",
        "session_id": "claude-session",
        "permission_mode": "acceptEdits",
        "tool_name": "Edit",
        "tool_input": {"file_path": "/etc/passwd", "old_string": "x", "new_string": "y"},
        "tool_use_id": "toolu_02",
    }
    output = asyncio.run(permission.pre_tool_use(hook_input, "toolu_02", {"signal": None}))
    assert output["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert output["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert fake_gate.requests_to("/permission")[0]["body"]["tool"] == "Edit"


def test_hook_and_callback_for_one_call_share_its_id(fake_gate, permission) -> None:
    fake_gate.verdicts["write_file"] = "ask"
    hook_input = {"tool_name": "Write", "tool_input": {"file_path": "a", "content": "b"}}
    first = asyncio.run(permission.pre_tool_use(hook_input, "toolu_03", None))
    second = asyncio.run(
        permission.can_use_tool("Write", hook_input["tool_input"], {"tool_use_id": "toolu_03"})
    )
    assert first["hookSpecificOutput"]["permissionDecision"] == "deny"  # still pending
    assert second["behavior"] == "deny"
    assert list(fake_gate.approvals) == [("sdk-session", "toolu_03")]


def test_a_finished_run_interrupts_the_agent(fake_gate, permission) -> None:
    permission.client.finish()
    result = asyncio.run(permission.can_use_tool("Bash", {"command": "ls"}, {"tool_use_id": "x"}))
    hook = asyncio.run(permission.pre_tool_use({"tool_name": "Bash", "tool_input": {}}, "y", None))
    assert result["behavior"] == "deny" and result["interrupt"] is True
    assert hook["continue_"] is False


def test_an_unreachable_gate_denies(fake_gate, permission) -> None:
    fake_gate.stop()
    result = asyncio.run(permission.can_use_tool("Bash", {"command": "ls"}, {"tool_use_id": "x"}))
    assert result["behavior"] == "deny" and "could not decide" in result["message"]


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "dontAsk", "auto"])
def test_options_wire_the_gate_in_every_permission_mode(permission, mode: str) -> None:
    existing = {"matcher": "Bash", "hooks": [], "timeout": None}
    options = claude_agent_options(
        permission, permission_mode=mode, hooks={"PreToolUse": [existing]}, cwd="/workspace"
    )
    assert options["permission_mode"] == mode
    assert options["can_use_tool"] == permission.can_use_tool
    gate_matcher, kept = options["hooks"]["PreToolUse"]
    assert gate_matcher["matcher"] is None and gate_matcher["hooks"] == [permission.pre_tool_use]
    assert kept is existing and options["cwd"] == "/workspace"


def test_bypass_permissions_is_refused(permission) -> None:
    with pytest.raises(BypassRefused):
        claude_agent_options(permission, permission_mode="bypassPermissions")
    with pytest.raises(BypassRefused):
        claude_agent_options(permission, can_use_tool=lambda *a: {"behavior": "allow"})
    with pytest.raises(BypassRefused):
        claude_agent_options(permission, permission_prompt_tool_name="stdio")
    with pytest.raises(BypassRefused):
        claude_agent_options(permission, extra_args={"dangerously-skip-permissions": None})
    with pytest.raises(BypassRefused):
        claude_agent_options(permission, extra_args={"--permission-mode": "bypassPermissions"})


def test_sdk_tool_names_map_onto_the_gates_tools() -> None:
    assert translate_sdk_call("Bash", {"command": "ls", "timeout": 5}) == (
        "run_command",
        {"command": "ls"},
    )
    assert translate_sdk_call("Write", {"file_path": "/w/a", "content": "c"}) == (
        "write_file",
        {"path": "/w/a", "content": "c"},
    )
    # Not the connection's brokered `jira.create_issue`: another server may share the name.
    assert translate_sdk_call("mcp__jira__create_issue", {"title": "t"}) == (
        "mcp__jira__create_issue",
        {"title": "t"},
    )
    assert translate_sdk_call("WebFetch", {"url": "u"}) == ("WebFetch", {"url": "u"})


def test_a_bash_call_outside_the_project_is_asked_where_claude_code_runs_it(
    fake_gate, tmp_path
) -> None:
    """Claude Code keeps a `cd` from one Bash call to the next: `git status` in a folder laid
    out as a repository runs that folder's configuration. The SDK adapter asks as the CLI
    hook does, with a `cd` to where the call runs, for PreToolUse and the callback alike."""
    project, elsewhere = tmp_path / "project", tmp_path / "project" / "x"
    elsewhere.mkdir(parents=True)
    permission = GatePermission(
        fake_gate.client(), session_id="sdk", total_wait=0.5, project_dir=str(project)
    )
    fake_gate.verdicts["run_command"] = "ask"
    hook_input = {
        "tool_name": "Bash",
        "tool_input": {"command": "git status"},
        "cwd": str(elsewhere),
        "tool_use_id": "toolu_cd",
    }
    asyncio.run(permission.pre_tool_use(hook_input, "toolu_cd", None))
    context = {"tool_use_id": "toolu_cd"}
    asyncio.run(permission.can_use_tool("Bash", {"command": "git status"}, context))
    in_project = dict(hook_input, cwd=str(project), tool_use_id="toolu_here")
    asyncio.run(permission.pre_tool_use(in_project, "toolu_here", None))

    asked = [request["body"]["arguments"] for request in fake_gate.requests_to("/permission")]
    moved = {"command": f"cd {elsewhere} && git status"}
    assert asked[0] == moved and asked[1] == moved
    assert asked[-1] == {"command": "git status"}
