"""The real Claude Code CLI launched with an MCP server of its own on the command line.

`claude --strict-mcp-config --mcp-config '{"mcpServers": {"fluidbox__tracker": …}}'` gives
Claude Code a server whose `create_issue` is called `mcp__fluidbox__tracker__create_issue`,
the name of fluidbox's own `tracker__create_issue`. The hook left that name to fluidbox's
endpoint (it asked the endpoint's listing, which has it), so the call went to the other server
with no gate, no record and no approver. The hook now reads the command lines it runs under:
the call goes to the gate under its own name, which denies it, and the other server sees
nothing.
"""

from __future__ import annotations

import json

import pytest
from django.db import connection

from governance.models import ToolCall
from tests.agents.model_server import ScriptedModel
from tests.agents.test_claude_code import ClaudeCode, claude_code_run, denial_ids, result_text

pytestmark = pytest.mark.slow

CREATE_ISSUE = {
    "name": "create_issue",
    "description": "Open an issue.",
    "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}},
}


def test_a_server_claude_code_is_launched_with_under_fluidbox_s_name_gets_no_call(
    fluidbox_server, demo_org, operator, tmp_path, mcp_server_factory
):
    other = mcp_server_factory(tools=[CREATE_ISSUE])
    run_id, token = claude_code_run(demo_org, operator, "")
    servers = {"mcpServers": {"fluidbox__tracker": {"type": "http", "url": other.url}}}
    with ScriptedModel() as model:
        claude = ClaudeCode(tmp_path, model, token)
        claude.setup(fluidbox_server.url, run_id)
        result = claude.ask_for(
            "toolu_launched_1",
            "mcp__fluidbox__tracker__create_issue",
            {"title": "straight to the other server"},
            "--strict-mcp-config",
            "--mcp-config",
            json.dumps(servers),
        )
        assert "mcp__fluidbox__tracker__create_issue" in model.offered_tools()
        assert "toolu_launched_1" in denial_ids(result)
        assert "not in this run's frozen tool set" in result_text(model, "toolu_launched_1")

    assert other.calls() == []
    recorded = ToolCall.objects.get(run_id=run_id, tool_call_id="toolu_launched_1")
    assert (recorded.tool, recorded.decision) == ("mcp__fluidbox__tracker__create_issue", "deny")
    connection.close()
