"""Hostile JSON bodies over real HTTP: nesting that would blow the parser's recursion, and
duplicate keys that would let one body mean two things. Every JSON endpoint answers 400 and
nothing changes."""

import json

import httpx
import pytest
from django.apps import apps

from governance.models import Approval, BudgetReservation, ToolCall
from governance.services.orgs import api_key_create
from tests.conftest import run_body

pytestmark = pytest.mark.slow


def row_counts() -> dict[str, int]:
    return {model._meta.label: model._base_manager.count() for model in apps.get_models()}


def deep(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def with_duplicate_first_key(body: dict, other_value) -> str:
    """`body` as JSON with its first key repeated in front, holding `other_value`."""
    first = next(iter(body))
    return "{" + json.dumps(first) + ":" + json.dumps(other_value) + "," + json.dumps(body)[1:]


@pytest.fixture
def live(fluidbox_server):
    return fluidbox_server


@pytest.fixture
def world(org, operator, operator_key, approver, echo_server):
    """A run with a reservation and a pending approval, a connection, keys for each role."""
    from tests.governance.broker.support import connect

    connection_id = connect(operator, echo_server)
    created = operator.post("/v1/runs", run_body(connections=["crm"])).json()
    run_id, token = created["id"], created["session_token"]
    runner = {"Authorization": f"Bearer {token}"}
    return {
        "run_id": run_id,
        "runner": runner,
        "operator": {"Authorization": f"Bearer {operator_key}"},
        "approver": {
            "Authorization": f"Bearer {api_key_create(org=org, user=approver, name='p').plaintext}"
        },
        "connection_id": connection_id,
    }


def endpoints(server, world) -> list[tuple[str, str, dict, dict]]:
    """(method, url, headers, a valid body) for every endpoint that reads a JSON body."""
    base, run = server.url, world["run_id"]
    runner, operator, approver = world["runner"], world["operator"], world["approver"]
    gate_body = {
        "session_id": "s-1",
        "tool_call_id": "c-1",
        "tool": "read_file",
        "arguments": {"path": "/workspace/a"},
    }
    reservation = httpx.post(
        f"{base}/v1/runs/{run}/budget/reservations",
        json={"request_key": "r-1", "max_output_tokens": 10, "input_tokens_upper_bound": 10},
        headers=runner,
    ).json()["id"]
    pending = httpx.post(
        f"{base}/v1/runs/{run}/permission",
        json={**gate_body, "tool_call_id": "c-ask", "tool": "send_email", "arguments": {"to": "x"}},
        headers=runner,
    )
    assert pending.json()["decision"] == "pending"
    approval = pending.json()["approval"]["id"]
    return [
        ("POST", f"{base}/v1/runs", operator, run_body()),
        ("POST", f"{base}/v1/runs/{run}/permission", runner, gate_body),
        (
            "POST",
            f"{base}/v1/runs/{run}/budget/reservations",
            runner,
            {"request_key": "r-2", "max_output_tokens": 1, "input_tokens_upper_bound": 1},
        ),
        (
            "POST",
            f"{base}/v1/runs/{run}/budget/reservations/{reservation}/settle",
            runner,
            {"input_tokens": 1, "output_tokens": 1},
        ),
        (
            "POST",
            f"{base}/v1/runs/{run}/tools/crm.lookup/call",
            runner,
            {"session_id": "s-1", "tool_call_id": "c-2", "arguments": {"id": "1"}},
        ),
        (
            "POST",
            f"{base}/v1/connections",
            operator,
            {"slug": "other", "kind": "shared", "transport": "streamable-http", "url": base},
        ),
        (
            "POST",
            f"{base}/v1/connections/{world['connection_id']}/reconnect",
            operator,
            {"credential": {"header": "Authorization", "value": "Bearer new"}},
        ),
        (
            "POST",
            f"{base}/v1/approvals/{approval}/decision",
            approver,
            {"decision": "approve"},
        ),
        (
            "PUT",
            f"{base}/v1/policies/default",
            operator,
            {"yaml": "name: default\nrules: []\n"},
        ),
        (
            "POST",
            f"{base}/v1/policies/default/evaluate",
            operator,
            {"call": "run_command:ls"},
        ),
        (
            "POST",
            f"{base}/v1/policies/default/replay",
            operator,
            {"draft": "name: default\nrules: []\n"},
        ),
    ]


def send(method, url, headers, text: str) -> httpx.Response:
    return httpx.request(
        method,
        url,
        content=text.encode(),
        headers={**headers, "Content-Type": "application/json"},
        timeout=30,
    )


def test_a_body_nested_5000_deep_is_a_400_on_every_json_endpoint(live, world):
    targets = endpoints(live, world)
    before = row_counts()
    for method, url, headers, _ in targets:
        response = send(method, url, headers, deep(5000))
        assert response.status_code == 400, (url, response.status_code, response.text[:300])
        assert response.json()["error"] == "invalid"
        assert "deeper than 64" in response.json()["detail"]
    assert row_counts() == before
    assert "RecursionError" not in live.log()


def test_nesting_at_the_limit_is_read_and_one_past_it_is_refused(live, world):
    method, url, headers, body = endpoints(live, world)[1]  # the gate
    # The arguments object sits at depth 2, so 62 more levels reach 64 exactly.
    at_limit = {**body, "tool_call_id": "c-deep", "arguments": {"path": "/workspace/a"}}
    nested: dict = {"x": 1}
    for _ in range(61):
        nested = {"x": nested}
    at_limit["arguments"]["extra"] = nested
    text = json.dumps(at_limit)
    assert send(method, url, headers, text).status_code == 200
    at_limit["tool_call_id"] = "c-deeper"
    at_limit["arguments"]["extra"] = {"x": nested}
    response = send(method, url, headers, json.dumps(at_limit))
    assert response.status_code == 400
    assert "deeper than 64" in response.json()["detail"]


def test_duplicate_keys_are_a_400_on_every_json_endpoint(live, world):
    targets = endpoints(live, world)
    before = row_counts()
    for method, url, headers, body in targets:
        first = next(iter(body))
        response = send(method, url, headers, with_duplicate_first_key(body, "other"))
        assert response.status_code == 400, (url, response.status_code, response.text[:300])
        assert response.json()["error"] == "invalid"
        assert f"duplicate key '{first}'" in response.json()["detail"]
    assert row_counts() == before
    # The approval the decision endpoint was shown is still waiting: nothing was decided.
    assert Approval.objects.get().status == "pending"
    assert BudgetReservation.objects.filter(status="held").count() == 1


def test_a_second_tool_key_cannot_swap_the_call_the_gate_sees(live, world):
    """`{"tool": "read_file", "tool": "run_command"}`: a proxy or reviewer reading the first
    key and the gate reading the last would disagree on what runs. Refused outright."""
    url = f"{live.url}/v1/runs/{world['run_id']}/permission"
    text = (
        '{"session_id": "s-1", "tool_call_id": "c-swap", "tool": "read_file", '
        '"tool": "run_command", "arguments": {"command": "rm -rf /"}}'
    )
    before = row_counts()
    response = send("POST", url, world["runner"], text)
    assert response.status_code == 400
    assert "JSON refused - duplicate key 'tool' in a JSON object" in response.json()["detail"]
    assert row_counts() == before


def test_duplicate_keys_inside_arguments_are_refused_too(live, world):
    url = f"{live.url}/v1/runs/{world['run_id']}/permission"
    text = (
        '{"session_id": "s-1", "tool_call_id": "c-nested", "tool": "write_file", '
        '"arguments": {"path": "/workspace/ok", "content": "x", "path": "/etc/passwd"}}'
    )
    before = row_counts()
    response = send("POST", url, world["runner"], text)
    assert response.status_code == 400
    assert "duplicate key 'path'" in response.json()["detail"]
    assert row_counts() == before


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_numbers_are_refused(live, world, constant):
    url = f"{live.url}/v1/runs/{world['run_id']}/budget/reservations"
    text = (
        '{"request_key": "r-x", "max_output_tokens": ' + constant + ", "
        '"input_tokens_upper_bound": 1}'
    )
    response = send("POST", url, world["runner"], text)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"


def test_brackets_inside_strings_do_not_count_as_nesting(live, world):
    url = f"{live.url}/v1/runs/{world['run_id']}/permission"
    body = {
        "session_id": "s-1",
        "tool_call_id": "c-brackets",
        "tool": "read_file",
        "arguments": {"path": "/workspace/" + "[{" * 3000 + '\\"' + "}]" * 10},
    }
    response = send("POST", url, world["runner"], json.dumps(body))
    assert response.status_code == 200, response.text
    assert response.json()["decision"] == "allow"


def test_the_mcp_endpoint_refuses_the_same_bodies_before_the_sdk_reads_them(
    live, world, echo_server, org, operator
):
    """`POST /v1/mcp` is parsed by the MCP SDK, not DRF: the same checks run first."""
    from governance.services.policies import policy_save
    from tests.governance.broker.support import BROKER_POLICY
    from tests.mcp_endpoint.conftest import with_client

    policy_save(org=org, text=BROKER_POLICY, author=None)  # crm.lookup: ALWAYS
    created = operator.post("/v1/runs", run_body(bundles=[], connections=["crm"])).json()
    token = created["session_token"]
    url = f"{live.url}/v1/mcp"
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    swapped = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
        '{"name": "crm__lookup", "arguments": {"id": "1"}, "name": "crm__update"}}'
    )
    before = row_counts()
    for text, expected in ((deep(5000), "deeper than 64"), (swapped, "duplicate key 'name'")):
        response = send("POST", url, headers, text)
        assert response.status_code == 400, response.text[:300]
        assert response.json()["error"]["code"] == -32700
        assert expected in response.json()["error"]["message"]
    assert row_counts() == before
    assert echo_server.calls() == []
    # The control: a well-formed call through the official SDK client is served.
    result = with_client(
        live.url, token, "2026-07-28", lambda c: c.call_tool("crm__lookup", {"id": "1"})
    )
    assert not result.is_error
    assert [call["tool"] for call in echo_server.calls()] == ["lookup"]


def test_mcp_tool_names_no_run_lists_are_tool_errors_never_a_500(
    live, world, echo_server, org, operator
):
    """The token check reads the tool a `tools/call` names with the run, guessing it from
    the name; names made to break that guess (an escaped NUL, a lone surrogate, a code point
    past Unicode, a name no listing holds, another run's tool) get the gate's refusal as a
    tool error, and nothing reaches the upstream."""
    from governance.services.policies import policy_save
    from tests.governance.broker.support import BROKER_POLICY

    policy_save(org=org, text=BROKER_POLICY, author=None)  # crm.lookup: ALWAYS
    created = operator.post("/v1/runs", run_body(bundles=[], connections=["crm"])).json()
    runner = {"Authorization": f"Bearer {created['session_token']}"}
    other = operator.post("/v1/runs", run_body(bundles=[], connections=[])).json()
    url = f"{live.url}/v1/mcp"
    accept = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    attempts = [
        (runner, "crm__lookup_x0_"),
        (runner, "crm___xd800_"),
        (runner, "crm___x110000_"),
        (runner, "crm__" + "x" * 80),
        # Names the ledger could not hold: a NUL, a lone surrogate (JSON escapes), too long.
        (runner, "crm__lookup\\u0000"),
        (runner, "z" * 300),
        ({"Authorization": f"Bearer {other['session_token']}"}, "crm__lookup"),
    ]
    for index, (headers, name) in enumerate(attempts):
        body = (
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "'
            + name
            + '", "arguments": {"id": "1"}, "_meta": {"fluidbox/toolCallId": "odd-'
            + str(index)
            + '"}}}'
        )
        response = send("POST", url, {**headers, **accept}, body)
        assert response.status_code == 200, (name, response.text[:300])
        assert "result" in response.json(), (name, response.text[:300])
        result = response.json()["result"]
        assert result["isError"] is True, (name, result)
    assert echo_server.calls() == []
    # A lone surrogate is not JSON the SDK reads: a parse error, before any gate.
    refused = send(
        "POST",
        url,
        {**runner, **accept},
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        '"params": {"name": "crm__\\ud800", "arguments": {}}}',
    )
    assert refused.status_code == 400 and refused.json()["error"]["code"] == -32700
    assert "lone surrogate" in refused.json()["error"]["message"]
    assert refused.json()["id"] == 1
    # A client's tool-call id the ledger could not hold is not used as the key: the allowed
    # call runs under a fresh id, once.
    response = send(
        "POST",
        url,
        {**runner, **accept},
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "crm__lookup", '
        '"arguments": {"id": "1"}, "_meta": {"fluidbox/toolCallId": "nul\\u0000id"}}}',
    )
    assert response.json()["result"]["isError"] is False, response.text[:300]
    assert [call["tool"] for call in echo_server.calls()] == ["lookup"]
    assert not ToolCall.objects.filter(tool_call_id__startswith="nul").exists()
    # The control: the listed name of an allowed tool reaches the upstream.
    response = send(
        "POST",
        url,
        {**runner, **accept},
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", '
        '"params": {"name": "crm__lookup", "arguments": {"id": "1"}}}',
    )
    assert response.json()["result"]["isError"] is False, response.text[:300]
    assert [call["tool"] for call in echo_server.calls()] == ["lookup", "lookup"]


def test_what_rest_refuses_with_a_400_the_mcp_endpoint_refuses_and_records_nowhere(
    live, world, echo_server, org, operator
):
    """An attacker tried, through `/v1/mcp`: a number past a double's range (`1e999`: a
    database error came back as the answer), arguments over the 256 KiB bound (recorded in
    full), and the frozen name `crm.lookup` instead of the listed `crm__lookup` (it ran).
    The first two are tool errors with REST's reason and recorded nowhere; the third is the
    gate's denial of a tool the run does not list, recorded. The upstream sees nothing."""
    from governance.services.policies import policy_save
    from tests.governance.broker.support import BROKER_POLICY

    policy_save(org=org, text=BROKER_POLICY, author=None)  # crm.lookup: ALWAYS
    created = operator.post("/v1/runs", run_body(bundles=[], connections=["crm"])).json()
    run_id = created["id"]
    headers = {
        "Authorization": f"Bearer {created['session_token']}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }

    def call(name: str, arguments_text: str) -> dict:
        body = (
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "'
            + name
            + '", "arguments": '
            + arguments_text
            + "}}"
        )
        response = send("POST", f"{live.url}/v1/mcp", headers, body)
        assert response.status_code == 200, response.text[:300]
        return response.json()["result"]

    before = row_counts()
    attempts = [
        ("crm__lookup", '{"id": 1e999}', "numbers too large for a double"),
        ("crm__lookup", json.dumps({"id": "1", "pad": "x" * 300_000}), "exceed 262144 bytes"),
        # jsonb gives these back as 0.0 and a 301-digit integer: the approver was shown,
        # and "remember": "policy" checked the current NEVER rules against, other values
        # than the call's key held (a NEVER for `"amount":-*` was undone)
        ("crm__lookup", '{"id": "1", "amount": -0.0}', "a negative zero (-0.0)"),
        ("crm__lookup", '{"id": "1", "n": 1e300}', "a fraction of 1e16 or more"),
    ]
    for name, arguments_text, expected in attempts:
        result = call(name, arguments_text)
        assert result["isError"] is True, (name, result)
        assert expected in result["content"][0]["text"], (name, result)
    assert row_counts() == before
    assert not ToolCall.objects.filter(run_id=run_id).exists()
    frozen_name = call("crm.lookup", '{"id": "1"}')
    assert frozen_name["isError"] is True
    assert "this run has no brokered tool named" in frozen_name["content"][0]["text"]
    recorded = ToolCall.objects.get(run_id=run_id)
    assert (recorded.tool, recorded.decision, recorded.source) == (
        "crm.lookup",
        "deny",
        "capability",
    )
    assert echo_server.calls() == []
    # REST refuses them with a 400 (the numbers jsonb rewrites, in the same words).
    rest = f"{live.url}/v1/runs/{run_id}/tools/crm.lookup/call"
    for number, (_, arguments_text, expected) in enumerate(attempts):
        text = '{"session_id": "s", "tool_call_id": "c", "arguments": ' + arguments_text + "}"
        response = send("POST", rest, headers, text)
        assert response.status_code == 400, response.text[:300]
        assert number < 2 or expected in response.text, response.text[:300]
    assert not Approval.objects.filter(run_id=run_id).exists()
    assert ToolCall.objects.filter(run_id=run_id).count() == 1  # the frozen name's denial
    # The control: the listed name with ordinary arguments runs.
    assert call("crm__lookup", '{"id": "1"}')["isError"] is False
    assert [c["tool"] for c in echo_server.calls()] == ["lookup"]


def wrong_type(value):
    """A JSON value of another type that a lenient reader would still turn into `value`'s."""
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return str(value)  # "10" for 10
    if isinstance(value, str):
        return 7  # 7 would read as "7"
    return "x"


def test_a_value_of_the_wrong_json_type_is_a_400_not_converted(live, world):
    """`{"call": 7}` is not the call "7", `{"budget_tokens": "10"}` not 10: every field of
    every JSON endpoint, one at a time, with a value of another type."""
    targets = endpoints(live, world)
    before = row_counts()
    for method, url, headers, body in targets:
        for key, value in body.items():
            text = json.dumps({**body, key: wrong_type(value)})
            response = send(method, url, headers, text)
            assert response.status_code == 400, (url, key, response.status_code, response.text)
            assert response.json()["error"] == "invalid"
    assert row_counts() == before
    assert Approval.objects.get().status == "pending"


def test_a_chunked_body_is_refused_with_411_not_read_as_empty(live, world):
    """Django reads a body by its Content-Length; sent chunked it would reach the view as
    empty and be refused for fields it carried. Told to send the length instead."""
    targets = endpoints(live, world)
    mcp = (
        "POST",
        f"{live.url}/v1/mcp",
        world["runner"],
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    before = row_counts()
    for method, url, headers, body in [*targets, mcp]:
        response = httpx.request(
            method,
            url,
            content=iter([json.dumps(body).encode()]),  # an iterator: httpx sends it chunked
            headers={**headers, "Content-Type": "application/json"},
            timeout=30,
        )
        assert response.request.headers["Transfer-Encoding"] == "chunked"
        assert response.status_code == 411, (url, response.status_code, response.text[:300])
        assert response.json()["error"] == "length_required"
        assert "Content-Length" in response.json()["detail"]
    assert row_counts() == before
    # The same body with its length is read as always.
    method, url, headers, body = targets[1]
    assert send(method, url, headers, json.dumps(body)).json()["decision"] == "allow"


def test_mcp_requests_the_sdk_would_misread_are_refused_in_json(live, world, echo_server):
    """An `id` that is not a string or a number would be taken for a notification (202,
    nothing said); a wrong content type got the SDK's plain-text answer. Both JSON now."""
    url = f"{live.url}/v1/mcp"
    headers = {
        **world["runner"],
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    before = row_counts()
    for request_id in ['{"a": 1}', "[1]", "true", "null"]:
        body = (
            '{"jsonrpc": "2.0", "id": ' + request_id + ', "method": "tools/call", '
            '"params": {"name": "crm__lookup", "arguments": {"id": "1"}}}'
        )
        response = send("POST", url, headers, body)
        assert response.status_code == 400, (request_id, response.status_code, response.text)
        assert response.json()["error"]["code"] == -32600
        assert "id must be a string or a number" in response.json()["error"]["message"]
    plain = httpx.post(
        url,
        content=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
        headers={**headers, "Content-Type": "text/plain"},
        timeout=30,
    )
    assert plain.status_code >= 400
    assert plain.headers["Content-Type"] == "application/json"
    assert "Content-Type" in plain.json()["error"]["message"]
    assert row_counts() == before
    assert echo_server.calls() == []
