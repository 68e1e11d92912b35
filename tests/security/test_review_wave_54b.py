"""Review wave 54b: what operators see (`/metrics`, traces, audit sinks), attacked by an agent
with a run token, by an admin of another organization, and by an unauthenticated client."""

import secrets
from urllib.parse import quote

import httpx
import pytest

from tests.conftest import run_body
from tests.observability import test_traces as traced
from tests.support import receivers

# A gunicorn exporting its spans to a collector this test starts (as in test_traces).
collector = traced.collector
traced_server = traced.traced_server

CANARY = "c4nary" + secrets.token_hex(10)


@pytest.mark.slow
def test_a_secret_an_agent_writes_into_the_url_reaches_no_exported_span(
    traced_server, collector, operator
):
    """Attack: the agent writes a secret into what it sends in the URL instead of the body:
    the tool name of a brokered call (it is a path segment: `/tools/<tool>/call`) and a
    query string. fluidbox masks a secret in a tool's name in its own `execute_tool` span
    ("a secret a client wrote into an id or a tool's name is masked in the span too"), and
    README promises secrets are never span attributes; but Django's server span copies the
    raw request target (`http.target`, from gunicorn's RAW_URI) into the exported span, so
    the tracing backend, read by more people than the ledger, gets the secret verbatim."""
    created = operator.post("/v1/runs", run_body()).json()
    run_id, token = created["id"], created["session_token"]
    trace_id, _, traceparent = traced.agent_traceparent()
    runner = {"Authorization": f"Bearer {token}", "traceparent": traceparent}
    tool = f"password={CANARY}"
    answer = httpx.post(
        f"{traced_server.url}/v1/runs/{run_id}/tools/{quote(tool, safe='=')}/call",
        json={"session_id": "s-1", "tool_call_id": "t-1", "arguments": {}},
        headers=runner,
        timeout=30,
    )
    assert answer.status_code in (200, 400, 404), answer.text
    answer = httpx.post(
        f"{traced_server.url}/v1/runs/{run_id}/permission?api_key={CANARY}",
        json={
            "session_id": "s-1",
            "tool_call_id": "t-2",
            "tool": "read_file",
            "arguments": {"path": "/workspace/a"},
        },
        headers=runner,
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    spans = traced.wait_for(
        lambda: (
            [s for s in traced.spans_of(collector, trace_id) if s.kind == traced.SERVER][1:]
            and traced.spans_of(collector, trace_id)
        ),
        what="both requests' server spans",
    )
    leaking = sorted(
        {
            f"{span.name}: {key}"
            for span in spans
            for key, value in span.attributes.items()
            if CANARY in str(value)
        }
    )
    assert leaking == []
    # The request line is still there for the operator, masked as the ledger masks it.
    targets = sorted(
        str(span.attributes.get("http.target")) for span in spans if span.kind == traced.SERVER
    )
    assert targets[0] == f"/v1/runs/{run_id}/permission?api_key=[redacted]"
    assert targets[1].startswith(f"/v1/runs/{run_id}/tools/password=[redacted]")
    for body in collector.bodies:
        assert CANARY.encode() not in body


@pytest.mark.slow
def test_an_agent_cannot_take_its_calls_out_of_the_operators_traces(
    traced_server, collector, operator
):
    """Attack: the agent sends its `traceparent` with the sampled flag off (`-00`). With
    no sampler configured, README promises each gate call is an `execute_tool` span; the
    SDK's default sampler (parentbased_always_on) obeys the agent's flag instead, so the
    denied `rm -rf /` is in no exported span at all, while its ledger event points at that
    (empty) trace. An operator chooses to follow the caller's sampling by setting a
    parent-based sampler (README, Traces); an agent must not choose it for them."""
    from ledger.models import Event

    created = operator.post("/v1/runs", run_body()).json()
    run_id, token = created["id"], created["session_token"]
    hidden_trace, hidden_parent = secrets.token_hex(16), secrets.token_hex(8)
    answer = httpx.post(
        f"{traced_server.url}/v1/runs/{run_id}/permission",
        json={
            "session_id": "s",
            "tool_call_id": "hidden",
            "tool": "run_command",
            "arguments": {"command": "rm -rf /"},
        },
        headers={
            "Authorization": f"Bearer {token}",
            "traceparent": f"00-{hidden_trace}-{hidden_parent}-00",
        },
        timeout=30,
    )
    assert answer.status_code == 200 and answer.json()["decision"] == "deny"
    # A later, ordinary call: once its spans are in, the earlier call's would be too.
    visible_trace, _, traceparent = traced.agent_traceparent()
    answer = httpx.post(
        f"{traced_server.url}/v1/runs/{run_id}/permission",
        json={
            "session_id": "s",
            "tool_call_id": "visible",
            "tool": "read_file",
            "arguments": {"path": "/workspace/a"},
        },
        headers={"Authorization": f"Bearer {token}", "traceparent": traceparent},
        timeout=30,
    )
    assert answer.status_code == 200
    traced.trace_spans(collector, visible_trace, traced.answered)
    decision = traced.decision_event(run_id, "hidden")
    assert decision["trace_id"] == hidden_trace
    spans = traced.wait_for(
        lambda: (
            [s for s in traced.spans_of(collector, hidden_trace) if s.kind == traced.SERVER]
            and traced.spans_of(collector, hidden_trace)
        ),
        timeout=5,
        what="the spans of the call sent unsampled",
    )
    call = traced.tool_span(spans, "run_command")
    assert call.attributes["fluidbox.decision"] == "deny"
    assert call.span_id == decision["span_id"]
    assert Event.objects.filter(run_id=run_id, type="tool.decision").count() == 2


# --- probes that held (kept as regression tests) --------------------------------------------

METRICS_TOKEN = "metrics-54b-review-token"  # fixed: it names the parametrized cases


@pytest.mark.django_db
@pytest.mark.parametrize(
    "headers, query",
    [
        ({}, ""),
        ({"HTTP_AUTHORIZATION": "Bearer"}, ""),
        ({"HTTP_AUTHORIZATION": "Bearer "}, ""),
        ({"HTTP_AUTHORIZATION": f"Basic {METRICS_TOKEN}"}, ""),
        ({"HTTP_AUTHORIZATION": f"Bearer {METRICS_TOKEN[:-1]}"}, ""),
        ({"HTTP_AUTHORIZATION": f"Bearer {METRICS_TOKEN}x"}, ""),
        ({"HTTP_AUTHORIZATION": f"Bearer {METRICS_TOKEN} {METRICS_TOKEN}"}, ""),
        ({"HTTP_AUTHORIZATION": f"Bearer\t{METRICS_TOKEN}"}, ""),
        ({"HTTP_AUTHORIZATION": f"Token {METRICS_TOKEN}"}, ""),
        ({}, f"?token={METRICS_TOKEN}"),
        ({}, f"?access_token={METRICS_TOKEN}"),
        ({"HTTP_X_METRICS_TOKEN": METRICS_TOKEN}, ""),
        ({"HTTP_HOST": "127.0.0.1:9464", "SERVER_PORT": "9464"}, ""),
    ],
)
def test_metrics_open_to_the_token_only(settings, headers, query):
    """An unauthenticated client: no near miss of the token, no other place for it, no
    claim to be the metrics listener opens /metrics."""
    from django.test import Client

    settings.FLUIDBOX_METRICS_TOKEN = METRICS_TOKEN
    refused = Client().get(f"/metrics{query}", **headers)
    assert refused.status_code == 401
    assert b"fluidbox_" not in refused.content
    granted = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {METRICS_TOKEN}")
    assert granted.status_code == 200 and b"fluidbox_database_up 1.0" in granted.content


@pytest.mark.django_db
def test_metrics_without_a_configured_token_refuse_an_empty_bearer(settings):
    from django.test import Client

    settings.FLUIDBOX_METRICS_TOKEN = None
    for header in ("Bearer ", "Bearer", "Bearer None", "Bearer null"):
        assert Client().get("/metrics", HTTP_AUTHORIZATION=header).status_code == 401


@pytest.mark.django_db(transaction=True)
def test_each_orgs_sink_gets_its_own_events_only(org, other_org, operator, other_operator):
    """An admin of another organization adds a sink to theirs: it gets that organization's
    events, never ours, and both stay in seq order with stable idempotency keys."""
    import json

    from ledger.models import Event
    from ledger.sinks import sink_create
    from ledger.streaming import sinks_deliver
    from tests.conftest import Api

    with receivers.SinkReceiver() as ours, receivers.SinkReceiver() as theirs:
        sink_create(org=org, name="ours", kind="jsonl", url=f"http://127.0.0.1:{ours.port}/in")
        sink_create(
            org=other_org,
            name="theirs",
            kind="splunk_hec",
            url=f"http://127.0.0.1:{theirs.port}/services/collector/event",
            token="hec-54b-token",
        )
        runs = {}
        for api, who in ((operator, "acme"), (other_operator, "globex")):
            created = api.post("/v1/runs", run_body()).json()
            runner = Api(created["session_token"])
            for n in range(3):
                runner.post(
                    f"/v1/runs/{created['id']}/permission",
                    {
                        "session_id": "s",
                        "tool_call_id": f"{who}-{n}",
                        "tool": "read_file",
                        "arguments": {"path": f"/workspace/{who}"},
                    },
                )
            runs[who] = created["id"]
        while sinks_deliver().delivered:
            pass
    got_ours = ours.lines()
    got_theirs = [item["event"] for item in theirs.lines()]
    assert {item["org"] for item in got_ours} == {"acme"}
    assert {item["org"] for item in got_theirs} == {"globex"}
    assert {item["run"] for item in got_ours} == {runs["acme"]}
    assert {item["run"] for item in got_theirs} == {runs["globex"]}
    assert "globex" not in json.dumps(got_ours) and "/workspace/acme" not in json.dumps(got_theirs)
    for got, who in ((got_ours, "acme"), (got_theirs, "globex")):
        seqs = [item["seq"] for item in got]
        assert seqs == list(range(1, Event.objects.filter(run_id=runs[who]).count() + 1))
        assert [item["idempotency_key"] for item in got] == [f"{runs[who]}:{s}" for s in seqs]


@pytest.mark.slow
def test_a_hostile_trace_context_is_never_a_500_nor_in_the_ledger(
    traced_server, collector, operator
):
    """The agent's `traceparent`, `tracestate` and `baggage`: malformed, huge, or carrying
    a secret. Every call is still decided, and no trace header reaches the ledger."""
    from ledger.models import Event

    created = operator.post("/v1/runs", run_body()).json()
    run_id, token = created["id"], created["session_token"]
    good = traced.agent_traceparent()[2]
    hostile = [
        {"traceparent": "garbage"},
        {"traceparent": "00-" + "0" * 32 + "-" + "0" * 16 + "-01"},
        {"traceparent": "ff-" + "a" * 32 + "-" + "b" * 16 + "-01"},
        {"traceparent": "00-" + "a" * 32 + "-" + "b" * 16 + "-01-" + "x" * 60000},
        {"traceparent": good, "tracestate": f"v=api_key-{CANARY}" + ",k=v" * 5000},
        {"traceparent": good, "tracestate": "\x01=\x02,,=," + "=" * 4000},
        {"traceparent": good, "baggage": f"password={CANARY}" + ",a=%zz" * 3000},
        {"traceparent": good, "baggage": "=;;;%%%" * 2000},
    ]
    for n, extra in enumerate(hostile):
        answer = httpx.post(
            f"{traced_server.url}/v1/runs/{run_id}/permission",
            json={
                "session_id": "s",
                "tool_call_id": f"tp-{n}",
                "tool": "read_file",
                "arguments": {"path": "/workspace/a"},
            },
            headers={"Authorization": f"Bearer {token}", **extra},
            timeout=30,
        )
        assert answer.status_code in (200, 400, 431), (n, answer.status_code, answer.text[:200])
        if answer.status_code == 200:
            assert answer.json()["decision"] == "allow", n
    ledger = repr(list(Event.objects.filter(run_id=run_id).values_list("data", flat=True)))
    assert CANARY not in ledger
