"""Audit log streaming, from the receiving end: every ledger event of the organization, the
events API's envelope, in seq order per run, at least once, duplicates only under the same
idempotency key, whatever the sink and the streamer go through."""

import signal
import sys
import time
from collections import defaultdict

import pytest
from django.test import override_settings

from governance.models import Organization
from ledger.api import event_json
from ledger.models import AuditSink, Event
from ledger.sinks import sink_create
from ledger.streaming import sink_lag, sinks_deliver
from tests.conftest import Api, run_body
from tests.support.receivers import SinkReceiver
from tests.support.servers import ServerProcess, child_environment

SINK_TOKEN = "sink-token-0123456789"


def wait_for(condition, *, timeout=90.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def calls(runner: Api, run_id: str, prefix: str, count: int = 3) -> None:
    """A few gate calls: an allow, a deny, an ask (3 to 4 ledger events each)."""
    shapes = [
        ("read_file", {"path": "/workspace/a"}),
        ("run_command", {"command": "rm -rf /"}),
        ("send_email", {"to": "bob@example.com", "body": "hi"}),
    ]
    for index in range(count):
        tool, arguments = shapes[index % len(shapes)]
        response = runner.post(
            f"/v1/runs/{run_id}/permission",
            {
                "session_id": "s",
                "tool_call_id": f"{prefix}-{index}",
                "tool": tool,
                "arguments": arguments,
            },
        )
        assert response.status_code == 200, response.content


def ledger_keys(org) -> set[str]:
    return {
        f"{run_id}:{seq}"
        for run_id, seq in Event.objects.filter(run__org=org).values_list("run_id", "seq")
    }


def received_keys(receiver: SinkReceiver) -> set[str]:
    return {line["idempotency_key"] for line in receiver.lines()}


class Streamer(ServerProcess):
    """`manage.py ledger stream`, stopped with SIGTERM and started again by the test."""

    def __init__(self, tmp_path, **env: str) -> None:
        args = [sys.executable, "manage.py", "ledger", "stream", "--poll", "0.1"]
        super().__init__(args, child_environment(**env), tmp_path / "streamer.log")


def assert_in_order_with_stable_keys(lines: list[dict], org) -> None:
    first: dict[str, dict] = {}
    order: dict[str, list[int]] = defaultdict(list)
    for line in lines:
        key = line["idempotency_key"]
        if key in first:
            assert line == first[key], f"{key} came again with different content"
            continue
        first[key] = line
        order[line["run"]].append(line["seq"])
    for run_id, seqs in order.items():
        assert seqs == list(range(1, len(seqs) + 1)), f"run {run_id} out of order: {seqs}"
    events = Event.objects.filter(run__org=org)
    assert len(first) == events.count()
    for event in events:
        line = first[f"{event.run_id}:{event.seq}"]
        # The same redacted envelope as the events API, plus where it belongs.
        assert {key: line[key] for key in ("seq", "type", "at", "data", "hash")} == event_json(
            event
        )
        assert line["prev_hash"] == event.prev_hash
        assert line["org"] == org.slug and line["run"] == str(event.run_id)


@pytest.mark.slow
def test_every_event_arrives_in_order_through_refusals_outages_and_restarts(
    transactional_db, tmp_path, org, other_org, make_run, other_operator
):
    receiver = SinkReceiver(refuse_first=3, expect_authorization=f"Bearer {SINK_TOKEN}")
    receiver.start()
    sink = sink_create(
        org=org,
        name="siem",
        kind="jsonl",
        url=f"http://127.0.0.1:{receiver.port}/ingest",
        token=SINK_TOKEN,
    )
    runs = [make_run() for _ in range(3)]
    for index, (run_id, runner) in enumerate(runs):
        calls(runner, run_id, f"a{index}")
    # Another organization's ledger is not this sink's business.
    other = other_operator.post("/v1/runs", run_body())
    assert other.status_code == 201
    calls(Api(other.json()["session_token"]), other.json()["id"], "x")

    streamer = Streamer(tmp_path)
    streamer.start()
    try:
        # It refuses the first deliveries; the streamer retries with backoff and gets through.
        wait_for(lambda: len(receiver.lines()) > 0, what="a first accepted delivery")
        assert AuditSink.objects.get(pk=sink.pk).failed_attempts >= 3

        # The sink goes away mid-stream while the runs go on, then comes back on its port.
        receiver.stop()
        for index, (run_id, runner) in enumerate(runs):
            calls(runner, run_id, f"b{index}")
        failed = AuditSink.objects.get(pk=sink.pk).failed_attempts
        wait_for(
            lambda: AuditSink.objects.get(pk=sink.pk).failed_attempts > failed,
            what="a delivery to the stopped sink to fail",
        )
        receiver.start()

        # The streamer itself restarts mid-stream: it resumes from the acknowledged cursors.
        wait_for(lambda: len(received_keys(receiver)) > 0, what="deliveries after the outage")
        streamer.stop(signal.SIGTERM)
        for index, (run_id, runner) in enumerate(runs):
            calls(runner, run_id, f"c{index}")
        streamer.start()
        wait_for(
            lambda: received_keys(receiver) >= ledger_keys(org),
            what="every event of the organization",
        )
    finally:
        streamer.stop()
        receiver.stop()

    lines = receiver.lines()
    assert received_keys(receiver) == ledger_keys(org)  # nothing of the other organization
    assert_in_order_with_stable_keys(lines, org)
    assert {headers["Content-Type"] for headers in receiver.headers} == {"application/x-ndjson"}
    sink.refresh_from_db()
    assert sink.delivered_events >= len(ledger_keys(org))
    assert sink_lag(sink) == 0
    assert sink.dropped_events == 0 and sink.consecutive_failures == 0


def test_a_splunk_hec_sink_gets_hec_events_with_its_token(transactional_db, org, make_run):
    receiver = SinkReceiver(expect_authorization="Splunk hec-0123456789")
    with receiver:
        sink_create(
            org=org,
            name="splunk",
            kind="splunk_hec",
            url=f"http://127.0.0.1:{receiver.port}/services/collector/event",
            token="hec-0123456789",
        )
        run_id, runner = make_run()
        calls(runner, run_id, "h")
        while sinks_deliver().delivered:
            pass
    lines = receiver.lines()
    assert len(lines) == Event.objects.filter(run_id=run_id).count()
    for line in lines:
        assert line["sourcetype"] == "fluidbox:ledger" and line["source"] == "fluidbox"
        assert isinstance(line["time"], float)
        assert line["fields"]["idempotency_key"] == line["event"]["idempotency_key"]
    assert_in_order_with_stable_keys([line["event"] for line in lines], org)


def test_a_dead_sink_falls_behind_by_its_bound_at_most_and_says_so(
    transactional_db, org, make_run, admin_user
):
    receiver = SinkReceiver()  # not started: nothing listens on its port yet
    sink = sink_create(
        org=org, name="dead", kind="jsonl", url=f"http://127.0.0.1:{receiver.port}/ingest"
    )
    AuditSink.objects.filter(pk=sink.pk).update(max_backlog=4)
    run_id, runner = make_run()
    calls(runner, run_id, "d", count=5)
    total = Event.objects.filter(run_id=run_id).count()
    assert total > 4

    outcome = sinks_deliver()
    sink.refresh_from_db()
    assert outcome.failed and outcome.dropped == total - 4
    assert sink.dropped_events == total - 4 and sink_lag(sink) == 4
    assert sink.failed_attempts == 1 and "could not deliver" in sink.last_error

    # /metrics and the admin show the lag, the drops and the failure.
    with override_settings(FLUIDBOX_METRICS_TOKEN="t0ken-for-test"):
        scraped = Api("t0ken-for-test").get("/metrics").content.decode()
    assert 'fluidbox_audit_sink_lag_events{sink="acme/dead"} 4.0' in scraped
    assert f'fluidbox_audit_sink_events_dropped_total{{sink="acme/dead"}} {total - 4}.0' in scraped
    assert 'fluidbox_audit_sink_delivery_failures_total{sink="acme/dead"} 1.0' in scraped
    page = Api(user=admin_user).get("/admin/ledger/auditsink/").content.decode()
    assert "dead" in page and f'<td class="field-dropped_events">{total - 4}</td>' in page
    assert '<td class="field-lag">4</td>' in page

    # Back up: the newest four arrive, in order, after the backoff.
    with receiver:
        wait_for(lambda: sinks_deliver().delivered or sink_lag(sink) == 0, what="delivery")
        wait_for(lambda: sink_lag(sink) == 0, what="the backlog to drain")
    seqs = [line["seq"] for line in receiver.lines()]
    assert seqs == list(range(total - 3, total + 1))


def test_sinks_are_configured_in_the_admin_with_a_write_only_token(
    transactional_db, org, admin_user, auditor
):
    admin = Api(user=admin_user).client
    token = "hec-secret-abcdef123456"
    added = admin.post(
        "/admin/ledger/auditsink/add/",
        {
            "org": org.pk,
            "name": "splunk",
            "kind": "splunk_hec",
            "url": "https://splunk.example.com:8088/services/collector/event",
            "token": token,
            "is_active": "on",
            "max_backlog": 1000,
        },
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    sink = AuditSink.objects.get(org=org, name="splunk")
    assert sink.token_sealed and token not in sink.token_sealed
    page = admin.get(f"/admin/ledger/auditsink/{sink.pk}/change/").content.decode()
    assert token not in page and sink.token_sealed not in page
    assert "Lag (events)" in page

    # A HEC sink without its token, and a plain-http URL where http is not allowed, are refused.
    refused = admin.post(
        "/admin/ledger/auditsink/add/",
        {
            "org": org.pk,
            "name": "nokey",
            "kind": "splunk_hec",
            "url": "https://splunk.example.com/",
            "max_backlog": 10,
        },
    )
    assert refused.status_code == 200 and "needs its HEC token" in refused.content.decode()
    with override_settings(FLUIDBOX_SINK_ALLOW_HTTP=False):
        plain = admin.post(
            "/admin/ledger/auditsink/add/",
            {
                "org": org.pk,
                "name": "plain",
                "kind": "jsonl",
                "url": "http://siem.example.com/",
                "max_backlog": 10,
            },
        )
    assert plain.status_code == 200 and "https://" in plain.content.decode()
    assert not AuditSink.objects.filter(name__in=["nokey", "plain"]).exists()

    # An auditor reads the sinks and changes nothing.
    reader = Api(user=auditor).client
    assert reader.get(f"/admin/ledger/auditsink/{sink.pk}/change/").status_code == 200
    assert reader.get("/admin/ledger/auditsink/add/").status_code == 403
    assert Organization.objects.filter(audit_sinks__isnull=False).distinct().count() == 1
