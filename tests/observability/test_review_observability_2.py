"""A second attacker's review of what operators and security teams get out of fluidbox:
audit sinks and traces, from the side of someone who wants them to stall or to leak."""

import contextlib
import json
import logging
import socket
import threading
import time

import pytest
from django.test import Client, override_settings

from governance.errors import Invalid
from governance.services.orgs import api_key_create
from governance.services.policies import policy_save
from ledger.models import AuditSink, Event
from ledger.sinks import sink_create, sink_update
from ledger.streaming import sinks_deliver
from tests.conftest import Api, run_body
from tests.governance.broker.support import BROKER_POLICY, brokered_run, call, connect
from tests.ledger.support import checkpoint_now, export
from tests.observability import test_traces as traced
from tests.support.receivers import SinkReceiver


class DribblingSink:
    """A sink that reads the whole request, then answers one byte at a time, each byte well
    inside any read timeout: a per-read timeout never fires (a real attacker's answer never
    ends; this one ends after some 20 s, so that the test fails rather than hangs)."""

    def __init__(self, gap: float = 0.2) -> None:
        self.gap = gap
        self.requests = 0
        self.answered = threading.Event()  # the whole answer sent: the client waited it out
        self._stop = threading.Event()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self._dribble, args=(conn,), daemon=True).start()

    def _dribble(self, conn: socket.socket) -> None:
        answer = b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 60 + b"\r\nContent-Length: 0\r\n\r\n"
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(1 << 20)
                for byte in answer:
                    if self._stop.is_set():
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(self.gap)
                self.answered.set()
            except OSError:
                return

    def __enter__(self):
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._listener.close()


@pytest.mark.django_db(transaction=True)
@override_settings(FLUIDBOX_SINK_TIMEOUT=1)
def test_a_sink_answering_a_byte_at_a_time_cannot_stall_another_orgs_stream(
    org, other_org, make_run
):
    """Attack: the admin of one organization points its sink at a server that answers one
    byte every 0.2 s. httpx's timeout bounds each read, not the exchange, so without a
    deadline the streamer waits on it for hours while every other organization's sink
    (delivered by the same loop) gets nothing, and the sink's lease runs out under it."""
    with DribblingSink() as slow, SinkReceiver() as honest:
        sink_create(org=org, name="slow", kind="jsonl", url=f"http://127.0.0.1:{slow.port}/in")
        theirs = sink_create(
            org=other_org, name="siem", kind="jsonl", url=f"http://127.0.0.1:{honest.port}/in"
        )
        make_run()
        other = Api(api_key_create(org=other_org, name="ci2").plaintext)
        assert other.post("/v1/runs", run_body()).status_code == 201

        sinks_deliver()

        # The pass came back before the dribbling answer was complete (some 20 s of it): its
        # deadline cut it off, whatever the time a busy machine took for the rest of the pass.
        assert not slow.answered.is_set(), "the pass waited for the dribbling sink's answer"
        slow_sink = AuditSink.objects.get(org=org, name="slow")
        assert slow_sink.failed_attempts == 1 and slow_sink.delivered_events == 0
        assert "within 1 s" in slow_sink.last_error
        theirs.refresh_from_db()
        expected = Event.objects.filter(run__org=other_org).count()
        assert theirs.delivered_events == expected == len(honest.lines()) > 0
        # and only theirs: nothing of the first organization reaches the second's SIEM
        runs = {
            str(pk)
            for pk in Event.objects.filter(run__org=other_org).values_list("run_id", flat=True)
        }
        assert {line["org"] for line in honest.lines()} == {other_org.slug}
        assert {line["run"] for line in honest.lines()} == runs


@pytest.mark.django_db(transaction=True)
def test_a_webhook_answering_a_byte_at_a_time_is_cut_off_at_its_timeout(org, make_run):
    """The same attack on an approval webhook: the worker that notifies every
    organization's approvers is held for 5 s, not for as long as the server likes."""
    from governance.models import NotificationDelivery
    from governance.services.notifications import approval_notify_all, channel_create_webhook
    from tests.governance.gate.test_pipeline import ask

    with DribblingSink() as slow:
        url = f"http://127.0.0.1:{slow.port}/hook"
        channel_create_webhook(org=org, name="slow", url=url, secret="s3cret-for-hmac")
        run_id, runner = make_run()
        approval = ask(runner, run_id, "send_email", {"to": "a@b.c"})["approval"]["id"]
        approval_notify_all(approval_id=int(approval))
        # Cut off at its 5 s, not held for the whole dribbled answer (some 20 s).
        assert not slow.answered.is_set(), "the notifier waited for the dribbled answer"
    delivery = NotificationDelivery.objects.get(approval_id=approval)
    assert delivery.attempts == 1 and delivery.status == "pending"
    assert delivery.last_error == "ReadTimeout: no complete answer within 5 s"


@pytest.mark.django_db(transaction=True)
@override_settings(FLUIDBOX_SINK_TIMEOUT=1)
def test_a_sink_whose_name_never_resolves_is_given_up_at_its_timeout(org, make_run, monkeypatch):
    """A sink's hostname whose resolver never answers: the lookup has no socket of ours to
    shut at the deadline, so the streamer waited as long as the C library's retries last.
    The resolver here (the network's stand-in) holds the lookup until the test lets it go:
    the pass must come back while it is still held, with the timeout as the sink's error."""
    stalled = "siem.stalled.example"
    sink = sink_create(org=org, name="stalled", kind="jsonl", url=f"https://{stalled}/in")
    make_run()
    released = threading.Event()
    real_getaddrinfo = socket.getaddrinfo

    def resolver(host, *args, **kwargs):
        # A name given as a number only (AI_NUMERICHOST) is never sent to a resolver.
        if host == stalled and not kwargs.get("flags", 0) & socket.AI_NUMERICHOST:
            released.wait()
            raise socket.gaierror(socket.EAI_AGAIN, "released")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    safety = threading.Timer(120, released.set)  # a hang fails the test instead
    safety.start()
    try:
        sinks_deliver()
        held_throughout = not released.is_set()
    finally:
        safety.cancel()
        released.set()
    assert held_throughout, "the pass waited for the resolver"
    sink.refresh_from_db()
    assert sink.failed_attempts == 1 and sink.delivered_events == 0
    assert sink.last_error == "no complete answer within 1 s"


class HoldingSink(DribblingSink):
    """A dead sink: it reads the request and answers nothing until `released` is set."""

    def __init__(self, released: threading.Event) -> None:
        super().__init__()
        self.released = released

    def _dribble(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(1 << 20)
            except OSError:
                return
            self.released.wait()


@pytest.mark.django_db(transaction=True)
@override_settings(FLUIDBOX_SINK_TIMEOUT=60)
def test_dead_sinks_do_not_hold_back_a_live_one(org, other_org, make_run):
    """Four sinks of one organization that take every batch and never answer, each held to
    its whole timeout: delivered in turn, the other organization's live sink waited behind
    all four (4 × 60 s a pass). It gets its events while they are still held."""
    released = threading.Event()
    dead = [HoldingSink(released) for _ in range(4)]
    with contextlib.ExitStack() as stack, SinkReceiver() as live:
        for n, sink in enumerate(dead):
            stack.enter_context(sink)
            sink_create(
                org=org, name=f"dead{n}", kind="jsonl", url=f"http://127.0.0.1:{sink.port}/"
            )
        sink_create(
            org=other_org, name="live", kind="jsonl", url=f"http://127.0.0.1:{live.port}/in"
        )
        make_run()
        other = Api(api_key_create(org=other_org, name="ci2").plaintext)
        assert other.post("/v1/runs", run_body()).status_code == 201
        delivering = threading.Thread(target=sinks_deliver, daemon=True)
        delivering.start()
        try:
            # The dead sinks count a request when their accept loop wakes, which on a busy
            # machine may come after the live sink's answer: wait for both.
            wait_until(
                lambda: live.lines() and all(sink.requests for sink in dead),
                what="the live sink's batch while every dead sink holds its own",
            )
            assert not released.is_set() and all(sink.requests == 1 for sink in dead)
        finally:
            released.set()
            delivering.join(timeout=120)
    assert not delivering.is_alive()
    expected = Event.objects.filter(run__org=other_org).count()
    assert AuditSink.objects.get(name="live").delivered_events == expected == len(live.lines())
    assert {line["org"] for line in live.lines()} == {other_org.slug}


def wait_until(condition, *, what: str, timeout: float = 45.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {timeout:g} s"
        time.sleep(0.05)


class RedirectingSink(DribblingSink):
    """A sink that answers every batch with a redirect to `location`, at once."""

    def __init__(self, location: str) -> None:
        super().__init__()
        self.location = location

    def _dribble(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(1 << 20)
                conn.sendall(
                    f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {self.location}\r\n"
                    "Content-Length: 0\r\nConnection: close\r\n\r\n".encode()
                )
            except OSError:
                return


@pytest.mark.django_db(transaction=True)
def test_a_sink_redirecting_to_an_internal_address_is_not_followed(org, make_run):
    """Attack: a sink on an allowed address answers 307 to an internal service, hoping the
    streamer re-posts the ledger (and the token) there."""
    internal = SinkReceiver()
    redirecting = RedirectingSink(f"http://127.0.0.1:{internal.port}/steal")
    with internal, redirecting:
        sink = sink_create(
            org=org,
            name="redirecting",
            kind="jsonl",
            url=f"http://127.0.0.1:{redirecting.port}/in",
            token="sink-token-0123",
        )
        make_run()
        sinks_deliver()
    sink.refresh_from_db()
    assert redirecting.requests == 1 and internal.attempts == 0
    assert sink.failed_attempts == 1 and sink.delivered_events == 0
    assert sink.last_error == "the sink answered 307"


# --- secrets: nowhere an operator or a SIEM reads ------------------------------------------

KEY_CANARY = "sk-live-" + "k3y" * 6 + "a1"
NESTED_CANARY = "nested-" + "n3st" * 5
INLINE_CANARY = "inl1ne" * 5 + "z9"
CREDENTIAL_CANARY = "crm-" + "cr3d" * 6
ARGUMENT_CANARIES = (KEY_CANARY, NESTED_CANARY, INLINE_CANARY)
METRICS_TOKEN = "metrics-review-2-token"


def hostile_calls(runner, run_id: str) -> None:
    """Secrets an agent puts in arguments, in the three shapes a redactor must know, and a
    hostile upstream quoting the connection's credential and the call's arguments back."""
    arguments = {
        "api_key": KEY_CANARY,
        "config": {"headers": {"authorization": f"Bearer {NESTED_CANARY}"}},
        "command": f"curl -H 'Authorization: Bearer {INLINE_CANARY}' https://api.example.com/",
    }
    for n, extra in enumerate(
        ({}, {"echo_credentials": True}, {"fail_echoing_credentials": True}),
    ):
        call(runner, run_id, "crm.lookup", {"id": "1", **arguments, **extra}, call_id=f"b-{n}")
    call(
        runner,
        run_id,
        "crm.lookup",
        {"id": "1", **arguments, "fail_echoing_arguments": True},
        call_id="b-args",
    )
    answer = runner.post(
        f"/v1/runs/{run_id}/permission",
        {"session_id": "s-1", "tool_call_id": "p-1", "tool": "Bash", "arguments": arguments},
    )
    assert answer.status_code == 200, answer.content


@pytest.mark.django_db(transaction=True)
@override_settings(FLUIDBOX_METRICS_TOKEN=METRICS_TOKEN)
def test_canary_secrets_reach_no_sink_log_metric_or_export(
    org, operator, echo_server, tmp_path, caplog
):
    policy_save(
        org=org, text=BROKER_POLICY + '  - pattern: "Bash:*"\n    action: ALWAYS\n', author=None
    )
    connect(operator, echo_server, credential=f"Bearer {CREDENTIAL_CANARY}")
    canaries = (*ARGUMENT_CANARIES, CREDENTIAL_CANARY)
    with SinkReceiver() as jsonl, SinkReceiver() as hec, caplog.at_level(logging.DEBUG):
        sink_create(org=org, name="lines", kind="jsonl", url=f"http://127.0.0.1:{jsonl.port}/in")
        sink_create(
            org=org,
            name="hec",
            kind="splunk_hec",
            url=f"http://127.0.0.1:{hec.port}/services/collector/event",
            token="hec-token-0123456789",
        )
        run_id, runner = brokered_run(operator)
        hostile_calls(runner, run_id)
        # The upstream did quote the credential and the arguments back: the test bites.
        assert any(CREDENTIAL_CANARY in json.dumps(c) for c in echo_server.calls())
        while sinks_deliver().delivered:
            pass
        scraped = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {METRICS_TOKEN}")
        checkpoint_now(org)
        bundle = export(tmp_path, org=org.slug).read_text()
    assert scraped.status_code == 200
    delivered = json.dumps(jsonl.lines()) + json.dumps(hec.lines())
    assert len(jsonl.lines()) == len(hec.lines()) == Event.objects.filter(run_id=run_id).count()
    assert '"tool.brokered"' in delivered and "refused" in delivered  # the errors went out
    logged = "\n".join(record.getMessage() for record in caplog.records) + caplog.text
    sink_rows = json.dumps(list(AuditSink.objects.values()), default=str)
    for canary in canaries:
        for where, text in (
            ("a sink", delivered),
            ("a log line", logged),
            ("/metrics", scraped.content.decode()),
            ("the export bundle", bundle),
            ("a sink's row", sink_rows),
        ):
            assert canary not in text, f"{canary} in {where}"


# --- traces: an exception's text never leaves the process ----------------------------------


def test_an_exception_quoting_a_secret_reaches_no_exported_span():
    """Attack: make a view, a statement or an outgoing request fail with a message that
    quotes a secret (a database error quotes the row it refused; `int("sk-…")` quotes its
    input). The Django, psycopg and httpx instrumentations record the exception's message,
    its stack trace and `Type: message` as the span's status; what fluidbox exports keeps the
    class only, as its own spans do."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    from governance.observability.tracing_setup import class_only_exporter

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(class_only_exporter(memory)))
    tracer = provider.get_tracer("django-like")
    # As opentelemetry's `use_span` does when an instrumented request or statement raises.
    with tracer.start_as_current_span("POST v1/runs/<uuid:run_id>/permission"):
        try:
            with tracer.start_as_current_span("INSERT", record_exception=True):
                raise ValueError(f"Failing row contains (api_key={KEY_CANARY})")
        except ValueError:
            pass
    with tracer.start_as_current_span("GET", set_status_on_exception=False) as span:
        span.add_event("log", {"message": "kept"})
        span.set_status(Status(StatusCode.ERROR, f"ReadTimeout: {NESTED_CANARY}"))
    provider.shutdown()

    spans = memory.get_finished_spans()
    exported = repr(
        [
            (s.name, s.status.description, [(e.name, dict(e.attributes)) for e in s.events])
            for s in spans
        ]
    )
    assert KEY_CANARY not in exported and NESTED_CANARY not in exported
    insert = next(s for s in spans if s.name == "INSERT")
    assert insert.status.status_code == StatusCode.ERROR
    assert [dict(e.attributes) for e in insert.events] == [{"exception.type": "ValueError"}]
    get = next(s for s in spans if s.name == "GET")
    assert [e.name for e in get.events] == ["log"] and get.status.status_code == StatusCode.ERROR


# --- sink configuration: no credential where approvers and auditors read it ----------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        f"token={KEY_CANARY}",
        f"a=1&api_key={KEY_CANARY}",
        f"X-Splunk-Token={KEY_CANARY}",
        f"access_token={KEY_CANARY}",
        f"password={KEY_CANARY}",
        f"sig=1&auth={KEY_CANARY}",
        # named by no secret word, but a credential all the same (Azure SAS, Functions)
        f"sv=2024-01-01&sig={KEY_CANARY}",
        f"code={KEY_CANARY}",
    ],
)
def test_a_credential_in_a_sinks_query_string_is_refused_and_never_shown(
    org, admin_user, approver, auditor, query
):
    """Attack: with no user or password allowed in the URL, an admin puts the HEC token in
    the query string (Splunk's query-string authentication), where every approver and
    auditor of the organization would read it off the sink's page."""
    url = f"https://splunk.example.com:8088/services/collector/event?{query}"
    form = {"org": org.pk, "name": "q", "kind": "jsonl", "is_active": "on", "max_backlog": 10}
    refused = Api(user=admin_user).client.post("/admin/ledger/auditsink/add/", {**form, "url": url})
    assert refused.status_code == 200 and "query string" in refused.content.decode()
    with pytest.raises(Invalid, match="query string"):
        sink_create(org=org, name="q", kind="jsonl", url=url)
    sink = sink_create(org=org, name="ok", kind="jsonl", url="https://splunk.example.com/c?a=1")
    with pytest.raises(Invalid, match="query string"):
        sink_update(sink=sink, url=url, is_active=True, max_backlog=10, new_token="")
    assert not AuditSink.objects.filter(url__contains=KEY_CANARY).exists()
    for reader in (approver, auditor):
        page = Api(user=reader).client.get("/admin/ledger/auditsink/").content.decode()
        assert "splunk.example.com" in page and KEY_CANARY not in page


# A gunicorn exporting its spans to a collector this test starts (as in test_traces).
collector = traced.collector
traced_server = traced.traced_server


@pytest.mark.slow
def test_secrets_in_arguments_and_a_hostile_upstreams_errors_reach_no_exported_span(
    traced_server,
    collector,
    org,
    operator,
    echo_server,
):
    """Live: gunicorn exporting over OTLP. The agent's arguments hold secrets in the three
    shapes; the upstream quotes the connection's credential and the arguments back, in its
    result and in JSON-RPC errors. Nothing of them is in any span the collector receives."""
    policy_save(org=org, text=traced.POLICY, author=None)
    connect(operator, echo_server, credential=f"Bearer {CREDENTIAL_CANARY}")
    created = operator.post("/v1/runs", run_body(connections=["crm"])).json()
    agent = traced.Agent(traced_server, created["session_token"], created["id"])
    arguments = {
        "id": "1",
        "api_key": KEY_CANARY,
        "config": {"headers": {"authorization": f"Bearer {NESTED_CANARY}"}},
        "command": f"curl -H 'Authorization: Bearer {INLINE_CANARY}' https://api.example.com/",
    }
    agent.gate("g-1", "run_command", arguments)
    for n, hostile in enumerate(
        ("echo_credentials", "fail_echoing_credentials", "fail_echoing_arguments")
    ):
        agent.brokered(f"b-{n}", "crm.lookup", {**arguments, hostile: True})
    assert any(CREDENTIAL_CANARY in json.dumps(c) for c in echo_server.calls())
    last_trace = agent.traces["b-2"][0]
    traced.trace_spans(collector, last_trace, traced.answered)
    errors = [s for s in collector.snapshot() if s.attributes.get("error.type")]
    assert errors  # the upstream's refusals were recorded, by class or code
    for body in collector.bodies:
        for canary in (*ARGUMENT_CANARIES, CREDENTIAL_CANARY):
            assert canary.encode() not in body
