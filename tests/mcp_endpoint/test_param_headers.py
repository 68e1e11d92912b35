"""2026-07-28's `Mcp-Param-*` headers on `POST /v1/mcp`: checked against the run's frozen input
schema (the one `tools/list` shows), before the gate and without asking the upstream."""

from __future__ import annotations

import json

import httpx
import pytest

from governance.models import ToolCall
from tests.conftest import run_body
from tests.governance.broker.support import connect

pytestmark = pytest.mark.slow

ERA = "2026-07-28"
HEADED_TOOLS = [
    {
        "name": "lookup",
        "description": "Read a record",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "x-mcp-header": "Record"}},
        },
        "annotations": {"readOnlyHint": True},
    }
]


def call_with_header(base_url: str, token: str, record_header: str, call_id: str):
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "crm__lookup",
            "arguments": {"id": "42"},
            "_meta": {
                "fluidbox/toolCallId": call_id,
                "io.modelcontextprotocol/protocolVersion": ERA,
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    return httpx.post(
        f"{base_url}/v1/mcp",
        content=json.dumps(body),
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": ERA,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "crm__lookup",
            "Mcp-Param-Record": record_header,
        },
        timeout=60,
    )


def test_a_header_that_contradicts_the_arguments_is_refused_before_the_gate(
    fluidbox_server, broker_org, operator, mcp_server_factory
):
    server = mcp_server_factory(tools=HEADED_TOOLS)
    connect(operator, server)
    created = operator.post("/v1/runs", run_body(bundles=[], connections=["crm"]))
    assert created.status_code == 201, created.content
    run_id, token = created.json()["id"], created.json()["session_token"]

    refused = call_with_header(fluidbox_server.url, token, "43", "c-mismatch")

    assert refused.status_code == 400, refused.text
    assert "Mcp-Param-Record" in refused.text
    assert not ToolCall.objects.filter(run_id=run_id).exists()
    assert server.calls() == []

    agreed = call_with_header(fluidbox_server.url, token, "42", "c-agreed")

    assert agreed.status_code == 200, agreed.text
    assert '"isError":false' in agreed.text.replace(" ", "")
    assert ToolCall.objects.get(run_id=run_id, tool_call_id="c-agreed").decision == "allow"
    assert [call["tool"] for call in server.calls()] == ["lookup"]
