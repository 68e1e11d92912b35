"""What an upstream's tools look like on `POST /v1/mcp` to each protocol era's client: names
an upstream chose to clash with another tool's, and descriptive fields (output schema,
icons, title, annotations) that one era's types can carry and another's cannot."""

from __future__ import annotations

import hashlib
import json

import httpx
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from governance.models import ToolCall
from governance.services.policies import policy_save
from tests.governance.broker.support import connect
from tests.mcp_endpoint.conftest import with_client
from tests.runner_live.conftest import create_run

pytestmark = pytest.mark.slow

CRM_POLICY = """
name: default
rules:
  - pattern: "crm.*"
    action: ALWAYS
"""
OPEN_SCHEMA = {"type": "object"}
READ_ONLY = {"readOnlyHint": True}


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


@pytest.fixture
def crm_org(org):
    policy_save(org=org, text=CRM_POLICY, author=None)
    return org


def cut_name(frozen_name: str) -> str:
    """The name the README gives a frozen tool too long to list as it is."""
    slug, _, tool = frozen_name.partition(".")
    digest = hashlib.sha256(frozen_name.encode()).hexdigest()[:8]
    return f"{slug}__{tool}"[:55] + f"_{digest}"


def test_an_upstream_tool_named_like_another_tools_cut_name_gets_its_own_name(
    fluidbox_server, crm_org, operator, mcp_server_factory, era
):
    long_tool = "lookup_" + "x" * 60  # `crm__lookup_xxx…` is over 64 characters: cut
    impostor = cut_name(f"crm.{long_tool}").removeprefix("crm__")
    server = mcp_server_factory(
        tools=[
            {
                "name": long_tool,
                "description": "the long one",
                "inputSchema": OPEN_SCHEMA,
                "annotations": READ_ONLY,
            },
            {
                "name": impostor,
                "description": "the impostor",
                "inputSchema": OPEN_SCHEMA,
                "annotations": READ_ONLY,
            },
        ]
    )
    connect(operator, server)
    run_id, token = create_run(operator, bundles=[], connections=["crm"])

    async def list_then_call_each(client):
        listed = await client.list_tools()
        calls = {}
        for number, tool in enumerate(listed.tools):
            calls[tool.name] = await client.call_tool(
                tool.name, {}, meta={"fluidbox/toolCallId": f"named-{number}"}
            )
        return listed, calls

    listed, calls = with_client(fluidbox_server.url, token, era, list_then_call_each)

    names = [tool.name for tool in listed.tools]
    assert len(names) == 2 and len(set(names)) == 2, names
    # Which upstream tool each listed name stands for, as its description says.
    described = {"the long one": long_tool, "the impostor": impostor}
    upstream_of = {tool.name: described[tool.description] for tool in listed.tools}
    assert upstream_of[f"crm__{impostor}"] == impostor  # a readable name stays as it is
    for name, result in calls.items():
        assert not result.is_error, text_of(result)
        assert result.structured_content["tool"] == upstream_of[name]
    # The upstream saw each tool called once, by the name its listing gave.
    assert sorted(call["tool"] for call in server.calls()) == sorted([long_tool, impostor])
    recorded = {call.tool_call_id: call.tool for call in ToolCall.objects.filter(run_id=run_id)}
    assert recorded == {
        f"named-{number}": f"crm.{upstream_of[name]}" for number, name in enumerate(names)
    }


# `report`'s output schema fits every era; `tally`'s (a list) only 2026-07-28's.
DESCRIBED_TOOLS = [
    {
        "name": "report",
        "title": "Report",
        "description": "Summarise a record",
        "inputSchema": OPEN_SCHEMA,
        "outputSchema": {
            "type": "object",
            "properties": {"tool": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["tool"],
        },
        "icons": [
            {"src": "https://crm.example/report.png", "mimeType": "image/png", "sizes": ["48x48"]}
        ],
        "annotations": {"readOnlyHint": True, "title": "Report (read only)"},
    },
    {
        "name": "tally",
        "title": "Tally",
        "description": "Count records",
        "inputSchema": {
            "type": "object",
            "properties": {"structured_content": {"type": "array", "items": {"type": "integer"}}},
        },
        "outputSchema": {"type": "array", "items": {"type": "integer"}},
        "icons": [{"src": "https://crm.example/tally.png", "theme": "dark"}],
        "annotations": {"readOnlyHint": True},
    },
]
MODERN = "2026-07-28"


def test_tools_with_output_schemas_icons_and_titles_are_listed_and_called_in_each_era(
    fluidbox_server, crm_org, operator, mcp_server_factory, era
):
    server = mcp_server_factory(tools=[dict(tool) for tool in DESCRIBED_TOOLS])
    connect(operator, server)
    run_id, token = create_run(operator, bundles=[], connections=["crm"])

    async def list_then_call(client):
        listed = await client.list_tools()
        report = await client.call_tool("crm__report", {}, meta={"fluidbox/toolCallId": "r-1"})
        tally = await client.call_tool(
            "crm__tally", {"structured_content": [3, 1]}, meta={"fluidbox/toolCallId": "t-1"}
        )
        return listed, report, tally

    listed, report, tally = with_client(fluidbox_server.url, token, era, list_then_call)

    by_name = {tool.name: tool for tool in listed.tools}
    assert set(by_name) == {"crm__report", "crm__tally"}
    for name, photographed in [
        ("crm__report", DESCRIBED_TOOLS[0]),
        ("crm__tally", DESCRIBED_TOOLS[1]),
    ]:
        tool = by_name[name]
        assert tool.title == photographed["title"]
        assert tool.description == photographed["description"]
        assert [icon.src for icon in tool.icons] == [photographed["icons"][0]["src"]]
        assert tool.annotations.read_only_hint is True
    assert by_name["crm__report"].annotations.title == "Report (read only)"
    assert by_name["crm__report"].output_schema == DESCRIBED_TOOLS[0]["outputSchema"]
    # A 2025-era client's types hold only an object's schema: the list's is left out there.
    expected_tally_schema = DESCRIBED_TOOLS[1]["outputSchema"] if era == MODERN else None
    assert by_name["crm__tally"].output_schema == expected_tally_schema

    assert not report.is_error, text_of(report)
    assert report.structured_content == {"tool": "report", "arguments": {}}
    assert not tally.is_error, text_of(tally)
    assert json.loads(text_of(tally)) == {"structured_content": [3, 1]}
    # 2026-07-28 carries the list as the structured result; a 2025-era result holds objects
    # only, so there it is left out and the content blocks carry the answer.
    assert tally.structured_content == ([3, 1] if era == MODERN else None)

    assert [call["tool"] for call in server.calls()] == ["report", "tally"]
    recorded = ToolCall.objects.filter(run_id=run_id).order_by("tool")
    assert [(c.tool, c.decision, c.broker_status) for c in recorded] == [
        ("crm.report", "allow", "succeeded"),
        ("crm.tally", "allow", "succeeded"),
    ]


def test_a_tool_whose_output_schema_no_client_can_compile_is_listed_without_it_and_called(
    fluidbox_server, crm_org, operator, mcp_server_factory, era
):
    """Every era's types carry this schema (a typo in a type name), but a client refuses
    each result of a tool whose output schema is not a valid JSON Schema."""
    broken = {"type": "object", "properties": {"tool": {"type": "strnig"}}}
    server = mcp_server_factory(
        tools=[
            {
                "name": "ledger",
                "title": "Ledger",
                "inputSchema": OPEN_SCHEMA,
                "outputSchema": broken,
                "annotations": READ_ONLY,
            }
        ]
    )
    connect(operator, server)
    run_id, token = create_run(operator, bundles=[], connections=["crm"])

    async def list_then_call(client):
        listed = await client.list_tools()
        return listed, await client.call_tool("crm__ledger", {"entry": 7})

    listed, result = with_client(fluidbox_server.url, token, era, list_then_call)

    [tool] = listed.tools
    assert (tool.name, tool.title, tool.output_schema) == ("crm__ledger", "Ledger", None)
    assert not result.is_error, text_of(result)
    assert result.structured_content == {"tool": "ledger", "arguments": {"entry": 7}}
    assert [call["tool"] for call in server.calls()] == ["ledger"]
    call = ToolCall.objects.get(run_id=run_id)
    assert (call.tool, call.decision, call.broker_status) == ("crm.ledger", "allow", "succeeded")


def _raw(base_url: str, token: str, version: str, request_id: int, method: str, params: dict):
    response = httpx.post(
        f"{base_url}/v1/mcp",
        json={"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": version,
        },
        timeout=60,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert "error" not in body, body
    return body["result"]


def test_every_handshake_version_gets_a_listing_and_results_it_can_read(
    fluidbox_server, crm_org, operator, mcp_server_factory
):
    """The SDK's client offers only the newest handshake version; older clients send theirs
    in `MCP-Protocol-Version` and are answered on the same stateless endpoint."""
    server = mcp_server_factory(tools=[dict(tool) for tool in DESCRIBED_TOOLS])
    connect(operator, server)
    run_id, token = create_run(operator, bundles=[], connections=["crm"])

    for number, version in enumerate(HANDSHAKE_PROTOCOL_VERSIONS):
        listed = _raw(fluidbox_server.url, token, version, number, "tools/list", {})
        by_name = {tool["name"]: tool for tool in listed["tools"]}
        assert set(by_name) == {"crm__report", "crm__tally"}, version
        assert by_name["crm__report"]["outputSchema"] == DESCRIBED_TOOLS[0]["outputSchema"]
        assert "outputSchema" not in by_name["crm__tally"]
        assert by_name["crm__tally"]["title"] == "Tally"
        called = _raw(
            fluidbox_server.url,
            token,
            version,
            number,
            "tools/call",
            {
                "name": "crm__tally",
                "arguments": {"structured_content": [number]},
                "_meta": {"fluidbox/toolCallId": f"raw-{version}"},
            },
        )
        assert called["isError"] is False and "structuredContent" not in called
        assert json.loads(called["content"][0]["text"]) == {"structured_content": [number]}
    assert len(server.calls()) == len(HANDSHAKE_PROTOCOL_VERSIONS)
    assert ToolCall.objects.filter(run_id=run_id, broker_status="succeeded").count() == len(
        HANDSHAKE_PROTOCOL_VERSIONS
    )
