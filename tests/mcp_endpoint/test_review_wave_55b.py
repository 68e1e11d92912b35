# ruff: noqa: E501, F811  (upstream programs in strings; fixtures imported from wave 54d)
"""Review wave 55b: `POST /v1/mcp` and the credential broker, probed from the agent's side."""

from __future__ import annotations

import json
import sys

import httpx
import pytest

import tests.support.servers as servers
from governance.models import ToolCall
from tests.mcp_endpoint.test_review_wave_54d import (  # noqa: F401  (fixtures)
    HOSTILE_SERVER,
    agent_calls,
    connect_http,
    hostile_org,
    stored,
)
from tests.mcp_servers.fixtures import ServerProcess
from tests.runner_live.conftest import create_run

pytestmark = pytest.mark.slow


@pytest.fixture
def live(transactional_db, tmp_path):
    script = tmp_path / "hostile_upstream.py"
    script.write_text(HOSTILE_SERVER, encoding="utf-8")
    log = tmp_path / "hostile.jsonl"
    log.touch()
    with servers.WebServer(tmp_path, workers=1, threads=8) as web:
        upstream = ServerProcess(
            command=lambda port: [sys.executable, str(script), str(port), str(log)],
            stderr_path=tmp_path / "hostile.err",
            port=servers.free_port(),
        )
        upstream.start()
        try:
            yield web, upstream, log
        finally:
            upstream.stop()


def post(web, token, body, headers=None, raw=None):
    return httpx.post(
        f"{web.url}/v1/mcp",
        content=raw if raw is not None else json.dumps(body),
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2025-11-25",
            **(headers or {}),
        },
        timeout=60,
    )


CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "hostile__probe", "arguments": {"mode": "is_error"}},
}

ODD = {
    "batch of one call": [CALL],
    "empty batch": [],
    "batch of two": [CALL, {**CALL, "id": 2}],
    "call as a notification": {k: v for k, v in CALL.items() if k != "id"},
    "unknown method": {"jsonrpc": "2.0", "id": 3, "method": "nope/nope", "params": {}},
    "method not a string": {"jsonrpc": "2.0", "id": 3, "method": 5},
    "params a list": {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1]},
    "name not a string": {**CALL, "params": {"name": 7, "arguments": {}}},
    "arguments a list": {**CALL, "params": {"name": "hostile__probe", "arguments": [1]}},
    "jsonrpc 1.0": {**CALL, "jsonrpc": "1.0"},
    "no jsonrpc": {k: v for k, v in CALL.items() if k != "jsonrpc"},
    "a string": "tools/call",
    "null": None,
    "a response": {"jsonrpc": "2.0", "id": 1, "result": {}},
    "an error response": {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}},
    "huge id": {**CALL, "id": 10**40},
    "float id": {**CALL, "id": 1.5},
    "meta not an object": {**CALL, "params": {**CALL["params"], "_meta": "x"}},
    "call id an object": {**CALL, "params": {**CALL["params"], "_meta": {"callId": {"a": 1}}}},
    "huge body": {**CALL, "params": {**CALL["params"], "arguments": {"x": "a" * 3_000_000}}},
    "initialize odd version": {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 5, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    },
}  # fmt: skip


def test_odd_json_rpc_bodies_get_clean_answers_and_run_nothing(live, hostile_org, operator):
    # Held (no defect found): batches, notifications, unknown methods, malformed members and
    # an oversized body are each answered with a JSON-RPC error or a 202, never a 500; a
    # tools/call sent as a notification (no id) runs nothing and records nothing.
    web, upstream, _log = live
    connect_http(operator, upstream)
    run_id, token = create_run(operator, bundles=[], connections=["hostile"])
    for case, body in ODD.items():
        response = post(web, token, body)
        assert response.status_code < 500, (case, response.text)
        assert response.headers["content-type"].startswith("application/json"), case
        assert "x7tail" not in response.text, case
    # Only the two well-formed calls ("huge id", "call id an object") reached the gate.
    assert ToolCall.objects.filter(run_id=run_id).count() == 2


ECHO_SERVER = r"""
import json, sys
import uvicorn
from mcp.server import Server
from mcp.shared.exceptions import MCPError
import mcp.types as t

def credential(ctx):
    return ctx.request.headers.get("x-api-key", "") or ctx.request.headers.get("authorization", "")

async def on_list_tools(ctx, params):
    return {"tools": [{"name": "probe", "inputSchema": {"type": "object"}}]}

async def on_call_tool(ctx, params):
    secret = credential(ctx)
    token = secret.split()[-1]
    mode = (params.arguments or {}).get("mode")
    if mode == "number":
        # An upstream that reads its numeric API key as a number and echoes it back.
        return {"content": [{"type": "text", "text": "ok"}],
                "structuredContent": {"account": int(token), "ids": [int(token)]}, "isError": False}
    if mode == "nested_json":
        # An upstream wrapping another service's JSON error (which quoted the key) in its own.
        inner = json.dumps({"error": "bad key", "key": token})
        return {"content": [{"type": "text", "text": json.dumps({"upstream_said": inner})}], "isError": True}
    return {"content": [{"type": "text", "text": "plain"}], "isError": False}

server = Server("echo", version="1", on_list_tools=on_list_tools, on_call_tool=on_call_tool)

async def legacy_only(ctx, call_next):
    if ctx.method == "server/discover":
        raise MCPError(code=t.METHOD_NOT_FOUND, message="Method not found")
    return await call_next(ctx)

server.middleware.append(legacy_only)
uvicorn.run(server.streamable_http_app(host="127.0.0.1"), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


@pytest.fixture
def echo(transactional_db, tmp_path):
    script = tmp_path / "echo_upstream.py"
    script.write_text(ECHO_SERVER, encoding="utf-8")
    with servers.WebServer(tmp_path, workers=1, threads=8) as web:
        upstream = ServerProcess(
            command=lambda port: [sys.executable, str(script), str(port)],
            stderr_path=tmp_path / "echo.err",
            port=servers.free_port(),
        )
        upstream.start()
        try:
            yield web, upstream
        finally:
            upstream.stop()


def connect_echo(operator, upstream, header, value) -> str:
    created = operator.post(
        "/v1/connections",
        {
            "slug": "hostile",
            "kind": "shared",
            "transport": "streamable-http",
            "url": f"http://127.0.0.1:{upstream.port}/mcp",
            "credential": {"header": header, "value": value},
        },
    )
    assert created.status_code == 201, created.content
    refreshed = operator.post(f"/v1/connections/{created.json()['id']}/tools/refresh")
    assert refreshed.status_code == 200, refreshed.content
    return created.json()["id"]


# DEFECT 1. A numeric credential (an account key or PIN sent as `X-Api-Key: 48151623420815`)
# that the upstream echoes back as a JSON *number* reached the agent verbatim: masking walked
# strings only. The answer's JSON text spells the credential exactly as it was sent (README
# "Connections, vault and broker": masked "wherever it puts it as sent: in a result ...").
@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_a_numeric_credential_echoed_as_a_json_number_never_reaches_the_agent(
    echo, hostile_org, operator, era
):
    web, upstream = echo
    key = "48151623420815"
    connect_echo(operator, upstream, "X-Api-Key", key)
    run_id, token = create_run(operator, bundles=[], connections=["hostile"])

    seen = agent_calls(web.url, token, era, [("hostile__probe", {"mode": "number"})])

    assert '"text":"ok"' in seen.text()  # the call ran and was answered
    assert key not in seen.text(), seen.text()
    assert key not in stored(run_id)


# BORDERLINE (contract reading): a credential holding a quote or a backslash, quoted by an
# upstream inside a JSON document that is itself inside a JSON string (a wrapped error body),
# reaches the agent spelt with escaped escapes (`\\\"`): two JSON reads give it back. The
# README promises the spellings of *one* quoting encoder; kept as a strict xfail to record it.
@pytest.mark.xfail(strict=True, reason="doubly JSON-encoded credential is not masked (borderline)")
def test_a_credential_quoted_in_json_inside_json_never_reaches_the_agent(
    echo, hostile_org, operator
):
    web, upstream = echo
    connect_echo(operator, upstream, "Authorization", 'Bearer c4nary55b/"q\\+x7tail')
    run_id, token = create_run(operator, bundles=[], connections=["hostile"])

    seen = agent_calls(web.url, token, "2026-07-28", [("hostile__probe", {"mode": "nested_json"})])

    assert "upstream_said" in seen.text()
    assert "x7tail" not in seen.text(), seen.text()


# Held: a `_meta` tool-call id is scoped to its run. Another run using the same id gets its
# own call run, and the first run reusing it for other arguments is refused with no result.
def test_a_meta_call_id_never_hands_one_call_s_result_to_another(echo, hostile_org, operator):
    web, upstream = echo
    connect_echo(operator, upstream, "Authorization", "Bearer c4nary55b-x7tail")
    _run_a, token_a = create_run(operator, bundles=[], connections=["hostile"])
    _run_b, token_b = create_run(operator, bundles=[], connections=["hostile"])

    agent_calls(web.url, token_a, "legacy", [("hostile__probe", {"mode": "plain"})])
    other_run = agent_calls(web.url, token_b, "legacy", [("hostile__probe", {"mode": "plain"})])
    other_args = agent_calls(web.url, token_a, "legacy", [("hostile__probe", {"mode": "x"})])

    assert '"text":"plain"' in other_run.text()
    assert "already used for a different call" in other_args.text()
    assert '"text":"plain"' not in other_args.text()


# DEFECT 2. A header credential an HTTP client cannot send (a non-ASCII character, a line
# break, surrounding blanks) was stored with a 201; every refresh and call then failed with
# "the MCP call failed (UnicodeEncodeError)" / "(LocalProtocolError)". SPEC §8: bad input gets
# a 4xx with a clear error. The same for reconnect, and for a NUL in an env credential (no
# environment variable can hold one: the stdio server would never start).
@pytest.mark.parametrize(
    "credential",
    [
        {"header": "Authorization", "value": "Bearer t\u00f6ken-x7tail"},
        {"header": "Authorization", "value": "Bearer tok\r\nX-Evil: 1"},
        {"header": "Authorization", "value": " Bearer tok-x7tail"},
        {"header": "X-Api-Key", "value": "k\u20ac\u00e4-x7tail"},
    ],
)
def test_a_header_credential_no_http_client_can_send_is_refused_when_stored(
    echo, hostile_org, operator, credential
):
    _web, upstream = echo
    body = {
        "slug": "hostile",
        "kind": "shared",
        "transport": "streamable-http",
        "url": f"http://127.0.0.1:{upstream.port}/mcp",
        "credential": credential,
    }
    created = operator.post("/v1/connections", body)
    assert created.status_code == 400, created.content
    assert "x7tail" not in created.content.decode()

    good = operator.post(
        "/v1/connections",
        {**body, "credential": {"header": "Authorization", "value": "Bearer ok\tx7tail"}},
    )
    assert good.status_code == 201, good.content
    again = operator.post(
        f"/v1/connections/{good.json()['id']}/reconnect", {"credential": credential}
    )
    assert again.status_code == 400, again.content
