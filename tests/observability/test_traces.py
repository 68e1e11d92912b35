"""Traces, as a collector receives them: a live fluidbox (gunicorn, 2 workers) exporting over
OTLP/HTTP to a receiver this test starts, for an allowed, a denied, an approved and a
brokered call, each sent with the agent's own `traceparent`."""

import json
import secrets
import subprocess
import sys
import time

import httpx
import pytest

from governance.services.orgs import api_key_create
from governance.services.policies import policy_save
from ledger.models import Event
from tests.conftest import TEST_POLICY, run_body
from tests.governance.broker.support import connect
from tests.support.receivers import OtlpReceiver
from tests.support.servers import ROOT, WebServer, child_environment

pytestmark = pytest.mark.slow

CANARY = "canary-" + secrets.token_hex(8)
CREDENTIAL = "Bearer crm-" + secrets.token_hex(8)
STAGES = ["budget", "frozen_set", "schema", "trust_tier", "policy", "approval"]
POLICY = TEST_POLICY.replace(
    "rules:\n", 'rules:\n  - pattern: "crm.lookup:*"\n    action: ALWAYS\n', 1
)
SERVER, CLIENT = 2, 3  # OTLP span kinds


def otel_environment(receiver: OtlpReceiver) -> dict[str, str]:
    return {
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_SERVICE_NAME": "fluidbox-under-test",
    }


@pytest.fixture
def collector():
    with OtlpReceiver() as receiver:
        yield receiver


@pytest.fixture
def traced_server(transactional_db, tmp_path, collector):
    with WebServer(tmp_path, workers=2, threads=16, **otel_environment(collector)) as server:
        yield server


def agent_traceparent() -> tuple[str, str, str]:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, span_id, f"00-{trace_id}-{span_id}-01"


def wait_for(condition, *, timeout=30.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class Agent:
    """A runner calling the live server, each call inside a trace of its own."""

    def __init__(self, server, token: str, run_id: str) -> None:
        self.server, self.token, self.run_id = server, token, run_id
        self.traces: dict[str, tuple[str, str]] = {}  # call id -> (trace id, agent span id)

    def post(self, path: str, body: dict, call_id: str) -> dict:
        trace_id, span_id, header = agent_traceparent()
        self.traces[call_id] = (trace_id, span_id)
        response = httpx.post(
            f"{self.server.url}{path}",
            json=body,
            headers={"Authorization": f"Bearer {self.token}", "traceparent": header},
            timeout=30,
        )
        assert response.status_code == 200, response.text
        return response.json()

    def gate(self, call_id: str, tool: str, arguments: dict) -> dict:
        body = {"session_id": "s-1", "tool_call_id": call_id, "tool": tool, "arguments": arguments}
        return self.post(f"/v1/runs/{self.run_id}/permission", body, call_id)

    def brokered(self, call_id: str, tool: str, arguments: dict) -> dict:
        body = {"session_id": "s-1", "tool_call_id": call_id, "arguments": arguments}
        return self.post(f"/v1/runs/{self.run_id}/tools/{tool}/call", body, call_id)


def spans_of(collector: OtlpReceiver, trace_id: str):
    return [span for span in collector.snapshot() if span.trace_id == trace_id]


def trace_spans(collector: OtlpReceiver, trace_id: str, until) -> list:
    """The trace's spans once `until(spans)` holds (the exporter sends in batches)."""

    def ready():
        spans = spans_of(collector, trace_id)
        return spans if until(spans) else None

    return wait_for(ready, what=f"the spans of trace {trace_id}")


def tool_span(spans, tool: str):
    matching = [span for span in spans if span.name == f"execute_tool {tool}"]
    assert len(matching) == 1, sorted({span.name for span in spans})
    return matching[0]


def children(spans, parent):
    return sorted(
        (span for span in spans if span.parent_span_id == parent.span_id),
        key=lambda span: span.start,
    )


def stage_spans(spans, parent) -> list:
    return [span for span in children(spans, parent) if "fluidbox.stage" in span.attributes]


def stage_names(spans, parent) -> list[str]:
    return [span.attributes["fluidbox.stage"] for span in stage_spans(spans, parent)]


def mcp_client_span(spans, parent):
    """The brokered call's request upstream (the database's spans are CLIENT spans too)."""
    found = [s for s in children(spans, parent) if "mcp.method.name" in s.attributes]
    assert len(found) == 1, [s.name for s in children(spans, parent)]
    assert found[0].kind == CLIENT
    return found[0]


def answered(spans) -> bool:
    # Django's server span ends last, and one process exports its spans in the order they end.
    return any(span.kind == SERVER for span in spans)


def decision_event(run_id, tool_call_id) -> dict:
    for event in Event.objects.filter(run_id=run_id, type="tool.decision").order_by("seq"):
        if event.data["tool_call_id"] == tool_call_id:
            return event.data
    raise AssertionError(f"no tool.decision for {tool_call_id}")


def test_each_gate_call_is_an_execute_tool_span_in_the_agents_trace(
    traced_server, collector, org, operator, approver, echo_server
):
    policy_save(org=org, text=POLICY, author=None)
    connect(operator, echo_server, credential=CREDENTIAL)
    created = operator.post("/v1/runs", run_body(connections=["crm"]))
    assert created.status_code == 201, created.content
    run_id, token = created.json()["id"], created.json()["session_token"]
    agent = Agent(traced_server, token, run_id)

    allowed = agent.gate("c-allow", "read_file", {"path": f"/workspace/{CANARY}"})
    denied = agent.gate("c-deny", "run_command", {"command": f"rm -rf /{CANARY}"})
    asked = agent.gate("c-ask", "send_email", {"to": "bob@example.com", "body": CANARY})
    assert (allowed["decision"], denied["decision"], asked["decision"]) == (
        "allow",
        "deny",
        "pending",
    )
    # The approver decides through the live server (a personal key), as a person would.
    personal = api_key_create(org=org, name="alice's", user=approver).plaintext
    decided = httpx.post(
        f"{traced_server.url}/v1/approvals/{asked['approval']['id']}/decision",
        json={"decision": "approve"},
        headers={"Authorization": f"Bearer {personal}"},
        timeout=30,
    )
    assert decided.status_code == 200, decided.text
    retried = agent.gate("c-ask", "send_email", {"to": "bob@example.com", "body": CANARY})
    assert retried["decision"] == "allow"
    brokered = agent.brokered("c-broker", "crm.lookup", {"id": CANARY})
    assert brokered["decision"] == "allow" and brokered["result"]["isError"] is False

    # The allowed call: the agent's span -> Django's server span -> execute_tool -> 5 stages.
    trace_id, agent_span = agent.traces["c-allow"]
    spans = trace_spans(collector, trace_id, answered)
    server_span = next(span for span in spans if span.kind == SERVER)
    assert server_span.parent_span_id == agent_span
    allow = tool_span(spans, "read_file")
    assert allow.parent_span_id == server_span.span_id
    assert allow.attributes["gen_ai.operation.name"] == "execute_tool"
    assert allow.attributes["gen_ai.tool.name"] == "read_file"
    assert allow.attributes["gen_ai.tool.call.id"] == "c-allow"
    assert allow.attributes["fluidbox.decision"] == "allow"
    assert allow.attributes["fluidbox.source"] == "policy"
    assert allow.attributes["fluidbox.rule"] == allowed["rule"]["index"] == 2  # from 1
    assert allow.attributes["fluidbox.policy_version"] >= 1
    assert allow.resource["service.name"] == "fluidbox-under-test"
    # Only the stages that ran, in the pipeline's order: policy decided, approval never ran.
    assert stage_names(spans, allow) == STAGES[:5]
    assert decision_event(run_id, "c-allow")["trace_id"] == trace_id

    trace_id, _ = agent.traces["c-deny"]
    spans = trace_spans(collector, trace_id, answered)
    deny = tool_span(spans, "run_command")
    assert deny.attributes["fluidbox.decision"] == "deny"
    assert deny.attributes["fluidbox.source"] == "policy"
    assert deny.attributes["fluidbox.rule"] == denied["rule"]["index"] == 3
    assert stage_names(spans, deny) == STAGES[:5]
    policy_stage = stage_spans(spans, deny)[-1]
    assert policy_stage.attributes["fluidbox.stage.outcome"] == "deny"
    assert decision_event(run_id, "c-deny")["trace_id"] == trace_id

    # The approved call: asked in one trace (all six stages), answered in the retry's trace;
    # its tool.decision points at the trace that asked.
    asked_trace = wait_for(
        lambda: next(
            (
                span.trace_id
                for span in collector.snapshot()
                if span.name == "execute_tool send_email"
                and span.attributes["fluidbox.decision"] == "pending"
            ),
            None,
        ),
        what="the asking call's span",
    )
    spans = trace_spans(collector, asked_trace, answered)
    pending = tool_span(spans, "send_email")
    assert stage_names(spans, pending) == STAGES
    assert stage_spans(spans, pending)[-1].attributes["fluidbox.stage.outcome"] == "pending"
    retry_trace, _ = agent.traces["c-ask"]
    approved = tool_span(trace_spans(collector, retry_trace, answered), "send_email")
    assert approved.attributes["fluidbox.decision"] == "allow"
    assert approved.attributes["fluidbox.source"] == "approval"
    assert approved.attributes["fluidbox.replayed"] is True
    assert decision_event(run_id, "c-ask")["trace_id"] == asked_trace

    # The brokered call: execute_tool (an extension tool) with its stages and a CLIENT span
    # `tools/call lookup` per the MCP conventions, whose context reached the upstream.
    trace_id, _ = agent.traces["c-broker"]
    spans = trace_spans(collector, trace_id, answered)
    call = tool_span(spans, "crm.lookup")
    assert call.attributes["gen_ai.tool.type"] == "extension"
    assert call.attributes["fluidbox.decision"] == "allow"
    assert call.attributes["fluidbox.broker.status"] == "succeeded"
    assert stage_names(spans, call) == STAGES[:5]
    client = mcp_client_span(spans, call)
    assert client.name == "tools/call lookup"
    assert client.attributes["mcp.method.name"] == "tools/call"
    assert client.attributes["gen_ai.tool.name"] == "lookup"
    assert client.attributes["gen_ai.operation.name"] == "execute_tool"
    assert client.attributes["network.transport"] == "tcp"
    assert client.attributes["server.address"] == "127.0.0.1"
    upstream = echo_server.calls()[-1]
    assert upstream["meta"]["traceparent"] == f"00-{trace_id}-{client.span_id}-01"

    # A client that wrote a secret into its ids: the span shows them as the ledger does.
    inline = {
        "session_id": f"password={CANARY}",
        "tool_call_id": f"Authorization: Bearer {CANARY}",
        "tool": "read_file",
        "arguments": {"path": "/workspace/a"},
    }
    assert agent.post(f"/v1/runs/{run_id}/permission", inline, "c-inline")["decision"] == "allow"
    inline_spans = trace_spans(collector, agent.traces["c-inline"][0], answered)
    assert "[redacted]" in tool_span(inline_spans, "read_file").attributes["gen_ai.tool.call.id"]

    # Arguments, results and the credential are in no span, attribute, event or resource.
    for body in collector.bodies:
        assert CANARY.encode() not in body
        assert CREDENTIAL.split()[1].encode() not in body


def test_tracing_is_off_without_an_exporter_configured(
    transactional_db, tmp_path, collector, org, operator, echo_server
):
    policy_save(org=org, text=POLICY, author=None)
    connect(operator, echo_server)
    created = operator.post("/v1/runs", run_body(connections=["crm"]))
    run_id, token = created.json()["id"], created.json()["session_token"]
    with WebServer(tmp_path, workers=1, threads=4) as server:
        agent = Agent(server, token, run_id)
        agent.gate("c-1", "read_file", {"path": "/workspace/a"})
        agent.brokered("c-2", "crm.lookup", {"id": "1"})
    assert collector.requests == 0
    assert "trace_id" not in decision_event(run_id, "c-1")
    assert "traceparent" not in (echo_server.calls()[-1]["meta"] or {})


CONTINUE_SCRIPT = """
import django, json, sys
django.setup()
from types import SimpleNamespace
from governance.observability import tracing
meta = json.loads(sys.argv[1])
run = SimpleNamespace(pk="r-1", agent="mcp-client")
with tracing.continue_trace_from_meta(meta):
    with tracing.tool_call_span(run=run, tool="read_file", tool_call_id="t-1", session_id="s"):
        print(json.dumps(tracing.ledger_ids()))
tracing.flush()
"""


def test_an_mcp_requests_meta_continues_the_agents_trace(transactional_db, collector):
    """`continue_trace_from_meta` (for the MCP endpoint): spans started inside it are
    children of the span named in `params._meta.traceparent`."""
    trace_id, parent, header = agent_traceparent()
    env = child_environment(**otel_environment(collector))
    for meta in ({"traceparent": header, "progressToken": 7}, {"traceparent": "garbage"}):
        done = subprocess.run(
            [sys.executable, "-c", CONTINUE_SCRIPT, json.dumps(meta)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    spans = wait_for(lambda: len(collector.snapshot()) >= 2 and collector.snapshot(), what="spans")
    continued, fresh = sorted(spans, key=lambda span: span.trace_id != trace_id)
    assert continued.trace_id == trace_id and continued.parent_span_id == parent
    # A malformed traceparent starts a trace of its own instead of failing the request.
    assert fresh.trace_id != trace_id and fresh.parent_span_id == ""


def test_a_call_through_the_mcp_endpoint_continues_the_trace_in_its_meta(
    traced_server, collector, org, operator, echo_server
):
    from tests.mcp_endpoint.conftest import with_client

    policy_save(org=org, text=POLICY, author=None)
    connect(operator, echo_server, credential=CREDENTIAL)
    created = operator.post("/v1/runs", run_body(connections=["crm"], bundles=[]))
    token = created.json()["session_token"]
    trace_id, parent, header = agent_traceparent()
    meta = {"traceparent": header, "fluidbox/toolCallId": "mcp-1"}
    result = with_client(
        traced_server.url,
        token,
        "2026-07-28",
        lambda client: client.call_tool("crm__lookup", {"id": CANARY}, meta=meta),
    )
    assert not result.is_error
    # The execute_tool span ends last here (no Django span: the MCP loop is its own thread).
    spans = trace_spans(
        collector, trace_id, lambda spans: any(s.name == "execute_tool crm.lookup" for s in spans)
    )
    call = tool_span(spans, "crm.lookup")
    assert call.parent_span_id == parent
    assert call.attributes["gen_ai.tool.call.id"] == "mcp-1"
    assert stage_names(spans, call) == STAGES[:5]
    client = mcp_client_span(spans, call)
    assert echo_server.calls()[-1]["meta"]["traceparent"] == f"00-{trace_id}-{client.span_id}-01"
    for body in collector.bodies:
        assert CANARY.encode() not in body


@pytest.mark.postgres
def test_the_gates_own_statements_are_spans_of_the_psycopg_instrumentation(
    traced_server, collector, org, operator
):
    """The statements every decision runs go through fluidbox's prebuilt server-binding
    cursor (`fluidbox.prebuilt_sql`), tracing on or off; traced, each is a CLIENT span of
    the psycopg instrumentation in the decision's trace, attributed exactly as the ORM's
    statements are, with no argument in it."""
    from django.db import connection

    created = operator.post("/v1/runs", run_body())
    assert created.status_code == 201, created.content
    run_id, token = created.json()["id"], created.json()["session_token"]
    agent = Agent(traced_server, token, run_id)
    for n in range(4):  # both workers, their connections' first statements and later ones
        allowed = agent.gate(f"c-sql-{n}", "read_file", {"path": f"/workspace/{CANARY}-{n}"})
        assert allowed["decision"] == "allow"

    prebuilt = {  # statement start -> (span name, runs in the view or under execute_tool)
        'SELECT r."id"': ("SELECT", "server"),
        # The call and its events, written at the head the token check read.
        'WITH head AS (UPDATE "ledger_runcounter"': ("WITH", "tool"),
    }
    attribute_keys = set()
    for n in range(4):
        trace_id, _ = agent.traces[f"c-sql-{n}"]
        spans = trace_spans(collector, trace_id, answered)
        parents = {
            "server": next(span for span in spans if span.kind == SERVER),
            "tool": tool_span(spans, "read_file"),
        }
        sql = [span for span in spans if span.attributes.get("db.system") == "postgresql"]
        for start, (name, parent) in prebuilt.items():
            found = [s for s in sql if s.attributes["db.statement"].startswith(start)]
            assert len(found) == 1, [s.attributes["db.statement"][:60] for s in sql]
            assert found[0].name == name
            assert found[0].kind == CLIENT
            assert found[0].parent_span_id == parents[parent].span_id
        for span in sql:  # the prebuilt statements' spans and the ORM's alike
            assert span.attributes["db.name"] == connection.settings_dict["NAME"]
            assert span.attributes["net.peer.name"] == connection.settings_dict["HOST"]
            attribute_keys.add(frozenset(span.attributes))
    assert len(attribute_keys) == 1, attribute_keys
    for body in collector.bodies:
        assert CANARY.encode() not in body
