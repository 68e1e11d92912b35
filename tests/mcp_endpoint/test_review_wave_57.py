"""Review wave 57 (h4): `POST /v1/mcp` probed as a hostile client holding one run's token.

No defect was confirmed in this wave; these tests pin what held (see each comment), so a
regression shows. The demo tracker is the upstream (`tracker.get_issue` ALWAYS,
`tracker.create_issue` ASK in the demo policy).
"""

from __future__ import annotations

import json

import httpx
import pytest

from governance.models import Approval, ToolCall
from ledger.models import Event
from tests.mcp_endpoint.test_review_wave_56b import call
from tests.runner_live.conftest import create_run, decide
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow


def post(url, token, body, *, timeout=60.0):
    return httpx.post(
        f"{url}/v1/mcp",
        content=json.dumps(body),
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2025-11-25",
        },
        timeout=timeout,
    )


def leave_while_waiting(url, token, body) -> None:
    """Send a call and go away after two seconds, as a client cancelling it does (the
    endpoint is stateless: a `notifications/cancelled` in another POST reaches no session)."""
    with pytest.raises(httpx.TimeoutException):
        post(url, token, body, timeout=2)


def text(response: httpx.Response) -> str:
    return json.dumps(response.json()["result"])


def events(run_id) -> list[str]:
    return [event.type for event in Event.objects.filter(run_id=run_id).order_by("seq")]


# Held: a call that waits for a human and is abandoned by its client keeps one pending
# approval; the same id with other arguments or for another tool is refused (nothing
# recorded, nothing of the first call), the same call again re-attaches (no new event), and
# after a deny the retry gets the settled denial. Exactly one approval and one decision.
def test_an_abandoned_ask_re_attaches_once_and_a_reused_id_is_refused(
    fluidbox_server, demo_org, operator, approver_key
):
    url = fluidbox_server.url
    run_id, token = create_run(operator, connections=["tracker"])
    ask = call("tracker__create_issue", {"title": "one"}, "ask-1")

    leave_while_waiting(url, token, ask)
    wait_until(lambda: Approval.objects.filter(run_id=run_id).exists(), "the approval")
    asked = ["run.created", "tool.requested", "approval.requested"]
    assert events(run_id) == asked

    other_args = post(url, token, call("tracker__create_issue", {"title": "two"}, "ask-1"))
    other_tool = post(url, token, call("tracker__get_issue", {"issue_id": 1}, "ask-1"))
    for answer in (other_args, other_tool):
        assert answer.json()["result"]["isError"] is True
        assert "already used for a different call" in text(answer)
    assert "Login page" not in text(other_tool)

    leave_while_waiting(url, token, ask)  # the same call again: it re-attaches
    assert events(run_id) == asked
    approval = Approval.objects.get(run_id=run_id)
    assert approval.status == "pending"

    assert decide(url, approver_key, str(approval.pk), "deny").status_code == 200
    retry = post(url, token, ask)
    assert retry.json()["result"]["isError"] is True and "denied by alice" in text(retry)
    assert events(run_id) == [*asked, "approval.decided", "tool.decision"]
    assert ToolCall.objects.filter(run_id=run_id).count() == 1


# Held: methods the endpoint does not serve are JSON-RPC "Method not found" errors, never a
# 500; a batch (which carried a call and its cancellation) is refused whole; names that only
# look like a listed one (other case, the frozen `.` name, an escape of a kept character, a
# sandbox tool) are capability denials, and arguments over 256 KiB are refused unrecorded.
UNSERVED = {
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "x"},
        "argument": {"name": "a", "value": "b"},
    },
    "logging/setLevel": {"level": "debug"},
    "resources/read": {"uri": "file:///etc/passwd"},
    "resources/templates/list": {},
    "prompts/list": {},
}  # fmt: skip
LOOKALIKES = [
    "Tracker__get_issue",
    "tracker.get_issue",
    "tracker__get_x5f_issue",
    "tracker_x2e_get_issue",
    "run_command",
]


def test_unserved_methods_batches_and_lookalike_names_run_nothing(
    fluidbox_server, demo_org, operator
):
    url = fluidbox_server.url
    run_id, token = create_run(operator, connections=["tracker"])
    for method, params in UNSERVED.items():
        answer = post(url, token, {"jsonrpc": "2.0", "id": 2, "method": method, "params": params})
        assert answer.status_code == 200, (method, answer.text)
        assert answer.json()["error"]["code"] == -32601, method

    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    batch = post(url, token, [call("tracker__create_issue", {"title": "b"}, "bc-1"), cancel])
    assert batch.status_code == 400 and "error" in batch.json()

    big = post(url, token, call("tracker__create_issue", {"title": "x" * 300_000}, "big-1"))
    assert "exceed" in text(big) and big.json()["result"]["isError"] is True
    assert events(run_id) == ["run.created"]

    for index, name in enumerate(LOOKALIKES):
        answer = post(url, token, call(name, {"issue_id": 1}, f"look-{index}"))
        assert answer.json()["result"]["isError"] is True, name
        assert "(capability)" in text(answer) and "Login page" not in text(answer), name
    calls = ToolCall.objects.filter(run_id=run_id)
    assert sorted(calls.values_list("decision", flat=True)) == ["deny"] * len(LOOKALIKES)
    assert not Event.objects.filter(run_id=run_id, type="tool.brokered").exists()
