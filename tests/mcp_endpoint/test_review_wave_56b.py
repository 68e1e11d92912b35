# ruff: noqa: E501  (the table of odd requests)
"""Review wave 56b: `POST /v1/mcp` probed from the agent's side (raw JSON-RPC over HTTP).

No defect was confirmed in this wave; these tests pin what held (see each comment), so a
regression shows. The demo tracker is the upstream (`tracker.get_issue` ALWAYS,
`tracker.create_issue` ASK in the demo policy).
"""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from governance.models import Approval, ToolCall, WaitSlot
from ledger.models import Event
from tests.runner_live.conftest import create_run, decide
from tests.support.servers import WebServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def two_processes(transactional_db, tmp_path):
    with WebServer(tmp_path, workers=2, threads=8) as server:
        yield server


def post(url, token, body=None, *, raw=None, method="POST", headers=None):
    return httpx.request(
        method,
        f"{url}/v1/mcp",
        content=raw if raw is not None else (json.dumps(body) if body is not None else None),
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2025-11-25",
            **(headers or {}),
        },
        timeout=60,
    )


def call(name, arguments, call_id, request_id=1):
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {"fluidbox/toolCallId": call_id},
        },
    }


def brokered(run_id, call_id) -> int:
    events = Event.objects.filter(run_id=run_id, type="tool.brokered")
    return sum(1 for event in events if event.data["tool_call_id"] == call_id)


# Held: the same `_meta` id sent for ANOTHER tool is refused as a tool error (not the first
# call's result, and not a second upstream call); the same id sent six times at once from
# different connections (and two web processes) runs the upstream once, every answer a result.
def test_a_meta_id_reused_for_another_tool_or_sent_at_once_runs_once(
    two_processes, demo_org, operator
):
    url = two_processes.url
    run_id, token = create_run(operator, connections=["tracker"])

    first = post(url, token, call("tracker__get_issue", {"issue_id": 1}, "dup-1")).json()
    other_tool = post(url, token, call("tracker__list_issues", {}, "dup-1")).json()

    assert first["result"]["isError"] is False
    assert other_tool["result"]["isError"] is True
    assert "already used for a different call" in json.dumps(other_tool)
    assert "Login page" not in json.dumps(other_tool)  # nothing of the first call's result
    assert brokered(run_id, "dup-1") == 1

    answers: list[httpx.Response] = []

    def send() -> None:
        answers.append(post(url, token, call("tracker__get_issue", {"issue_id": 2}, "same-1")))

    senders = [threading.Thread(target=send) for _ in range(6)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join()
    assert [answer.status_code for answer in answers] == [200] * 6
    assert all("result" in answer.json() for answer in answers), [a.text for a in answers]
    assert brokered(run_id, "same-1") == 1
    assert ToolCall.objects.filter(run_id=run_id, tool_call_id="same-1").count() == 1


# Held: one ASK waited on by four requests with the same id, spread over two web processes;
# one approval runs the upstream once: one answer carries the result, the others say it ran.
def test_one_ask_waited_on_by_several_processes_runs_once_when_approved(
    two_processes, demo_org, operator, approver_key
):
    url = two_processes.url
    run_id, token = create_run(operator, connections=["tracker"])
    body = call("tracker__create_issue", {"title": "once, across processes"}, "ask-many")
    answers: list[httpx.Response] = []

    def send() -> None:
        answers.append(post(url, token, body))

    senders = [threading.Thread(target=send) for _ in range(4)]
    for sender in senders:
        sender.start()
    # Every sender is waiting (a wait slot each) on the one pending approval.
    wait_until(
        lambda: WaitSlot.objects.filter(credential=f"run:{run_id}").count() == 4,
        "the four requests to wait on the approval",
    )
    pending = Approval.objects.get(run_id=run_id, status="pending")
    assert decide(url, approver_key, str(pending.pk)).status_code == 200
    for sender in senders:
        sender.join(60)

    results = [answer.json()["result"] for answer in answers]
    ran = [r for r in results if (r.get("structuredContent") or {}).get("title")]
    assert len(ran) == 1 and ran[0]["isError"] is False, results
    others = [r for r in results if r not in ran]
    assert all("already ran once" in json.dumps(r) for r in others), others
    assert brokered(run_id, "ask-many") == 1
    assert Approval.objects.filter(run_id=run_id).count() == 1


# Held: the endpoint's odd requests are each a JSON refusal or a JSON-RPC error, never a 500
# or an HTML page, and none of them reaches the gate.
ODD = {
    "DELETE": ("DELETE", None, None),
    "PUT": ("PUT", None, None),
    "resources/list": ("POST", {"jsonrpc": "2.0", "id": 5, "method": "resources/list"}, None),
    "prompts/get": ("POST", {"jsonrpc": "2.0", "id": 5, "method": "prompts/get", "params": {}}, None),
    "subscriptions/listen": ("POST", {"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen", "params": {}}, None),
    "tasks/get": ("POST", {"jsonrpc": "2.0", "id": 5, "method": "tasks/get", "params": {"taskId": "x"}}, None),
    "upper-case content type": ("POST", {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, {"Content-Type": "APPLICATION/JSON"}),
    "text/plain": ("POST", {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, {"Content-Type": "text/plain"}),
    "event stream only": ("POST", {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, {"Accept": "text/event-stream"}),
    "invalid UTF-8": ("POST", b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"\xff"}}', None),
    "CESU surrogate": ("POST", b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"\xed\xa0\x80"}}', None),
    "two documents": ("POST", b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}{"a":1}', None),
    "empty body": ("POST", b"", None),
    "progress token a list": ("POST", {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "tracker__get_issue", "arguments": {"issue_id": 1}, "_meta": {"progressToken": [1]}}}, None),
    "arguments a string": ("POST", {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "tracker__get_issue", "arguments": "x"}}, None),
}  # fmt: skip


def test_odd_requests_are_json_refusals_and_reach_no_gate(two_processes, demo_org, operator):
    url = two_processes.url
    run_id, token = create_run(operator, connections=["tracker"])
    for case, (method, body, headers) in ODD.items():
        raw = body if isinstance(body, bytes) else None
        response = post(
            url, token, body if raw is None else None, raw=raw, method=method, headers=headers
        )
        assert response.status_code < 500, (case, response.text)
        assert response.headers["content-type"].startswith(
            ("application/json", "text/event-stream")
        ), case
        assert "Traceback" not in response.text and "<html" not in response.text.lower(), case
        if response.headers["content-type"].startswith("application/json"):
            answer = response.json()
            assert "error" in answer, (case, answer)
    assert ToolCall.objects.filter(run_id=run_id).count() == 0
