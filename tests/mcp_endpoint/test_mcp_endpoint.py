"""`POST /v1/mcp` with the official SDK client against gunicorn, in both protocol eras."""

from __future__ import annotations

import threading

import anyio
import httpx
import pytest
from django.db import connection

from governance.models import Approval, ToolCall
from ledger.models import Event
from tests.mcp_endpoint.conftest import mcp_client, with_client
from tests.runner_live.conftest import DEMO_POLICY, create_run, decide
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow


def names(result) -> set[str]:
    return {tool.name for tool in result.tools}


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


def tracker_issue_count(base_url, token, era) -> int:
    result = with_client(base_url, token, era, lambda c: c.call_tool("tracker__list_issues", {}))
    assert not result.is_error, text_of(result)
    return len(result.structured_content["result"])


def test_a_run_lists_exactly_the_brokered_tools_it_may_call(
    fluidbox_server, demo_org, operator, era
):
    _, token = create_run(operator, connections=["tracker"])
    listed = with_client(fluidbox_server.url, token, era, lambda c: c.list_tools())
    assert names(listed) == {
        "tracker__list_issues",
        "tracker__get_issue",
        "tracker__create_issue",
        "tracker__add_comment",
    }
    by_name = {tool.name: tool for tool in listed.tools}
    assert by_name["tracker__list_issues"].annotations.read_only_hint is True
    assert "Open a new issue" in by_name["tracker__create_issue"].description
    assert by_name["tracker__create_issue"].input_schema["required"] == ["title"]


def test_a_read_only_run_lists_no_write_tool(fluidbox_server, demo_org, operator, era):
    _, token = create_run(operator, connections=["tracker"], trust_tier="read_only")
    listed = with_client(fluidbox_server.url, token, era, lambda c: c.list_tools())
    assert names(listed) == {"tracker__list_issues", "tracker__get_issue"}


def test_revoking_the_connection_removes_its_tools(fluidbox_server, demo_org, operator, era):
    _, token = create_run(operator, connections=["tracker"])
    from governance.models import Connection

    connection_id = Connection.objects.get(org=demo_org, slug="tracker").pk
    assert operator.post(f"/v1/connections/{connection_id}/revoke").status_code == 200
    listed = with_client(fluidbox_server.url, token, era, lambda c: c.list_tools())
    assert names(listed) == set()
    result = with_client(
        fluidbox_server.url, token, era, lambda c: c.call_tool("tracker__list_issues", {})
    )
    assert result.is_error and "revoked" in text_of(result)


def test_another_runs_tools_never_appear(fluidbox_server, demo_org, operator, era):
    _, with_tracker = create_run(operator, connections=["tracker"])
    _, without = create_run(operator, connections=[])
    assert names(with_client(fluidbox_server.url, without, era, lambda c: c.list_tools())) == set()
    result = with_client(
        fluidbox_server.url, without, era, lambda c: c.call_tool("tracker__list_issues", {})
    )
    assert result.is_error and "this run has no brokered tool named" in text_of(result)


def test_an_allowed_call_reaches_the_upstream_with_the_sealed_credential(
    fluidbox_server, demo_org, operator, approver_key, era
):
    run_id, token = create_run(operator, connections=["tracker"], autonomy="supervised")
    before = tracker_issue_count(fluidbox_server.url, token, era)
    approval = ApproveWhenAsked(fluidbox_server.url, approver_key, run_id)
    approval.start()
    result = with_client(
        fluidbox_server.url,
        token,
        era,
        lambda c: c.call_tool(
            "tracker__create_issue",
            {"title": "from the MCP endpoint"},
            meta={"claudecode/toolUseId": "toolu_create_1"},
        ),
    )
    approval.join(30)
    # The demo tracker refuses a create_issue without its token: success proves the broker
    # injected the sealed credential, which the client never had.
    assert not result.is_error, text_of(result)
    assert result.structured_content["title"] == "from the MCP endpoint"
    assert tracker_issue_count(fluidbox_server.url, token, era) == before + 1
    call = ToolCall.objects.get(run_id=run_id, tool_call_id="toolu_create_1")
    assert (call.session_id, call.tool, call.decision) == ("mcp", "tracker.create_issue", "allow")
    assert call.broker_status == "succeeded"


def test_each_clients_own_call_id_names_the_record_the_first_key_winning(
    fluidbox_server, demo_org, operator, era
):
    """Claude Code sends `claudecode/toolUseId`, Codex CLI `callId`, anyone
    `fluidbox/toolCallId`: the ledger keeps the call under the id the agent's hook uses."""
    run_id, token = create_run(operator, connections=["tracker"])
    metas = {
        "toolu_read_1": {"claudecode/toolUseId": "toolu_read_1"},
        "call_read_1": {"callId": "call_read_1"},
        "fb_read_1": {"fluidbox/toolCallId": "fb_read_1", "callId": "call_shadowed"},
    }

    async def read_each(client):
        return [
            await client.call_tool("tracker__get_issue", {"issue_id": 1}, meta=meta)
            for meta in metas.values()
        ]

    for result in with_client(fluidbox_server.url, token, era, read_each):
        assert not result.is_error, text_of(result)
    recorded = set(ToolCall.objects.filter(run_id=run_id).values_list("tool_call_id", flat=True))
    assert recorded == set(metas)
    decided = Event.objects.filter(run_id=run_id, type="tool.decision")
    assert sorted(e.data["tool_call_id"] for e in decided) == sorted(metas)


class ApproveWhenAsked(threading.Thread):
    """Another user deciding through the API while the MCP call waits."""

    def __init__(self, base_url, key, run_id, decision="approve"):
        super().__init__(daemon=True)
        self.base_url, self.key, self.run_id, self.decision = base_url, key, run_id, decision
        self.status: int | None = None

    def run(self):
        try:
            self._decide()
        finally:
            connection.close()  # this thread's own database connection

    def _decide(self):
        def pending():
            return Approval.objects.filter(run_id=self.run_id, status="pending").first()

        wait_until(lambda: pending() is not None, "an approval to appear", timeout=60)
        self.status = decide(self.base_url, self.key, str(pending().pk), self.decision).status_code


DENYING_POLICY = DEMO_POLICY.replace(
    '  - pattern: "tracker.list_issues:*"',
    '  - pattern: "tracker.create_issue:*forbidden*"\n    action: NEVER\n'
    '  - pattern: "tracker.list_issues:*"',
)


def test_a_denied_call_is_a_tool_error_with_the_reason_and_the_upstream_sees_nothing(
    fluidbox_server, demo_org, operator, era
):
    from governance.services.policies import policy_save

    policy_save(org=demo_org, text=DENYING_POLICY, author=None)
    run_id, token = create_run(operator, connections=["tracker"])
    before = tracker_issue_count(fluidbox_server.url, token, era)
    result = with_client(
        fluidbox_server.url,
        token,
        era,
        lambda c: c.call_tool("tracker__create_issue", {"title": "forbidden thing"}),
    )
    assert result.is_error
    assert "Permission denied" in text_of(result) and "policy" in text_of(result)
    assert tracker_issue_count(fluidbox_server.url, token, era) == before
    call = ToolCall.objects.get(run_id=run_id, tool="tracker.create_issue")
    assert (call.decision, call.source, call.broker_status) == ("deny", "policy", "")
    assert call.tool_call_id.startswith("mcp-")  # no _meta id: a fresh one


def test_an_ask_decided_through_the_api_while_the_call_waits_returns_the_result(
    fluidbox_server, demo_org, operator, approver_key, era
):
    run_id, token = create_run(operator, connections=["tracker"])
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value, total, message):
        progress.append((value, message))

    approval = ApproveWhenAsked(fluidbox_server.url, approver_key, run_id)
    approval.start()
    result = with_client(
        fluidbox_server.url,
        token,
        era,
        lambda c: c.call_tool(
            "tracker__add_comment",
            {"issue_id": 1, "text": "approved by a human"},
            progress_callback=on_progress,
            meta={"claudecode/toolUseId": "toolu_comment_1"},
        ),
    )
    approval.join(30)
    assert approval.status == 200
    assert not result.is_error, text_of(result)
    assert any("approved by a human" in str(c) for c in result.structured_content["comments"])
    assert progress and "awaiting approval" in (progress[0][1] or "")
    types = [e.type for e in Event.objects.filter(run_id=run_id).order_by("seq")]
    assert types.count("approval.decided") == 1 and types.count("tool.brokered") == 1


def test_retrying_with_the_same_meta_id_runs_the_upstream_once(
    fluidbox_server, demo_org, operator, approver_key, era
):
    run_id, token = create_run(operator, connections=["tracker"])
    before = tracker_issue_count(fluidbox_server.url, token, era)
    approval = ApproveWhenAsked(fluidbox_server.url, approver_key, run_id)
    approval.start()

    def create(client):
        return client.call_tool(
            "tracker__create_issue",
            {"title": "exactly once"},
            meta={"claudecode/toolUseId": "toolu_once"},
        )

    first = with_client(fluidbox_server.url, token, era, create)
    approval.join(30)
    second = with_client(fluidbox_server.url, token, era, create)
    assert not first.is_error, text_of(first)
    assert "already ran once" in text_of(second)
    assert tracker_issue_count(fluidbox_server.url, token, era) == before + 1
    assert ToolCall.objects.filter(run_id=run_id, tool_call_id="toolu_once").count() == 1
    brokered = Event.objects.filter(run_id=run_id, type="tool.brokered")
    assert [e.data["tool_call_id"] for e in brokered].count("toolu_once") == 1


def test_an_approval_given_after_the_client_left_runs_the_call_once_and_a_retry_says_so(
    fluidbox_server, demo_org, operator, approver_key
):
    """The README: an approval decides the call, whether or not the agent still listens."""
    era = "legacy"
    run_id, token = create_run(operator, connections=["tracker"])
    before = tracker_issue_count(fluidbox_server.url, token, era)

    def pending() -> Approval | None:
        return Approval.objects.filter(run_id=run_id, status="pending").first()

    async def call_then_leave():
        async def call():
            async with mcp_client(fluidbox_server.url, token, era) as client:
                await client.call_tool(
                    "tracker__create_issue",
                    {"title": "approved after the agent left"},
                    meta={"claudecode/toolUseId": "toolu_left"},
                )

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            while await anyio.to_thread.run_sync(pending) is None:
                await anyio.sleep(0.1)
            group.cancel_scope.cancel()  # the client goes away while the call waits

    anyio.run(call_then_leave)
    assert decide(fluidbox_server.url, approver_key, str(pending().pk)).status_code == 200

    def brokered() -> list[Event]:
        events = Event.objects.filter(run_id=run_id, type="tool.brokered")
        return [e for e in events if e.data["tool_call_id"] == "toolu_left"]

    wait_until(lambda: brokered(), "the approved call to run with nobody listening")
    assert tracker_issue_count(fluidbox_server.url, token, era) == before + 1
    retry = with_client(
        fluidbox_server.url,
        token,
        era,
        lambda c: c.call_tool(
            "tracker__create_issue",
            {"title": "approved after the agent left"},
            meta={"claudecode/toolUseId": "toolu_left"},
        ),
    )
    assert retry.is_error and "already ran once" in text_of(retry)
    assert tracker_issue_count(fluidbox_server.url, token, era) == before + 1
    assert len(brokered()) == 1


def test_a_finished_runs_token_gets_401(fluidbox_server, demo_org, operator, era):
    run_id, token = create_run(operator, connections=["tracker"])
    assert operator.post(f"/v1/runs/{run_id}/finish").status_code == 200
    response = httpx.post(
        f"{fluidbox_server.url}/v1/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        },
    )
    assert response.status_code == 401
    assert response.json()["error"] == "unauthenticated"
    with pytest.raises(BaseException) as refused:  # the SDK client gives up on the 401
        with_client(fluidbox_server.url, token, era, lambda c: c.list_tools())
    assert "401" in repr(refused.value) or "error" in repr(refused.value).lower()


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
def test_a_notification_is_a_202_with_no_body_and_no_html_type(
    fluidbox_server, demo_org, operator, version
):
    run_id, token = create_run(operator, connections=["tracker"])
    response = httpx.post(
        f"{fluidbox_server.url}/v1/mcp",
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": version,
        },
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        timeout=30,
    )
    assert response.status_code == 202
    assert response.content == b""
    assert "html" not in response.headers.get("content-type", "")
    assert ToolCall.objects.filter(run_id=run_id).count() == 0


def test_a_standalone_event_stream_is_refused_not_held_open(fluidbox_server, demo_org, operator):
    """An attacker with a run token opened hundreds of GET streams, each holding a server
    thread until every other request timed out. A GET is refused at once; the SDK's
    clients do without that stream (both eras are tested above)."""
    run_id, token = create_run(operator, connections=["tracker"])
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    answers = []

    def open_stream() -> None:
        with httpx.stream(
            "GET", f"{fluidbox_server.url}/v1/mcp", headers=headers, timeout=60
        ) as response:
            answers.append(
                (response.status_code, response.headers.get("allow", ""), response.read())
            )

    streams = [threading.Thread(target=open_stream) for _ in range(40)]
    for stream in streams:
        stream.start()
    for stream in streams:
        stream.join(90)
    assert len(answers) == 40
    for status, allowed, _body in answers:
        assert status == 405
        assert "POST" in allowed
    # The run's calls are answered as before.
    result = with_client(fluidbox_server.url, token, "legacy", lambda c: c.list_tools())
    assert "tracker__get_issue" in names(result)
    assert ToolCall.objects.filter(run_id=run_id).count() == 0


def test_a_stream_asked_for_as_event_stream_alone_is_a_405_not_a_406(
    fluidbox_server, demo_org, operator
):
    """Gemini CLI's MCP client (the TypeScript SDK) opens the standalone stream with
    `Accept: text/event-stream` alone, and drops the server unless the answer is 405."""
    _run_id, token = create_run(operator, connections=["tracker"])
    url = f"{fluidbox_server.url}/v1/mcp"
    stream_only = {"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-06-18"}

    refused = httpx.get(url, headers={**stream_only, "Authorization": f"Bearer {token}"})
    assert refused.status_code == 405
    assert "POST" in refused.headers["allow"]
    assert refused.headers["content-type"].startswith("application/json")

    unauthenticated = httpx.get(url, headers=stream_only)
    assert unauthenticated.status_code == 401
    # The calls themselves are answered as before.
    result = with_client(fluidbox_server.url, token, "legacy", lambda c: c.list_tools())
    assert "tracker__get_issue" in names(result)


def _raw_call(base_url: str, token: str, meta: dict) -> httpx.Response:
    return httpx.post(
        f"{base_url}/v1/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "tracker__get_issue", "arguments": {"issue_id": 1}, "_meta": meta},
        },
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
        timeout=60,
    )


def test_a_call_without_a_progress_token_is_answered_in_json_one_with_it_as_an_event_stream(
    fluidbox_server, demo_org, operator
):
    run_id, token = create_run(operator, connections=["tracker"])
    plain = _raw_call(fluidbox_server.url, token, {"fluidbox/toolCallId": "plain-1"})
    assert plain.status_code == 200, plain.text
    assert plain.headers["content-type"].startswith("application/json")
    assert plain.json()["id"] == 7
    assert plain.json()["result"]["isError"] is False
    streamed = _raw_call(
        fluidbox_server.url, token, {"fluidbox/toolCallId": "streamed-1", "progressToken": "p-1"}
    )
    assert streamed.status_code == 200, streamed.text
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert '"id":7' in streamed.text and '"isError":false' in streamed.text
    # Both went through the gate and the broker, each recorded once.
    for call_id in ("plain-1", "streamed-1"):
        call = ToolCall.objects.get(run_id=run_id, tool_call_id=call_id)
        assert (call.decision, call.broker_status) == ("allow", "succeeded")
    brokered = Event.objects.filter(run_id=run_id, type="tool.brokered")
    assert sorted(e.data["tool_call_id"] for e in brokered) == ["plain-1", "streamed-1"]


@pytest.mark.postgres
def test_with_psycopgs_pool_the_endpoint_checks_tokens_lists_and_brokers_as_without(
    transactional_db, tmp_path, demo_org, operator, era
):
    # With the pool the token check runs on the request thread (its connection comes from
    # the pool); a finished run's token must still be refused, and calls still brokered.
    from tests.support.servers import WebServer

    with WebServer(tmp_path, workers=1, threads=8, DB_POOL_SIZE="4") as server:
        run_id, token = create_run(operator, connections=["tracker"], trust_tier="read_only")
        listed = with_client(server.url, token, era, lambda c: c.list_tools())
        assert names(listed) == {"tracker__list_issues", "tracker__get_issue"}
        result = with_client(
            server.url,
            token,
            era,
            lambda c: c.call_tool(
                "tracker__get_issue", {"issue_id": 1}, meta={"fluidbox/toolCallId": "pooled-1"}
            ),
        )
        assert not result.is_error, text_of(result)
        call = ToolCall.objects.get(run_id=run_id, tool_call_id="pooled-1")
        assert call.broker_status == "succeeded"
        denied = with_client(
            server.url, token, era, lambda c: c.call_tool("tracker__create_issue", {"title": "x"})
        )
        assert denied.is_error and "read_only" in text_of(denied).replace("-", "_")
        assert operator.post(f"/v1/runs/{run_id}/finish").status_code == 200
        refused = _raw_call(server.url, token, {"fluidbox/toolCallId": "pooled-2"})
        assert refused.status_code == 401
        assert not ToolCall.objects.filter(run_id=run_id, tool_call_id="pooled-2").exists()
