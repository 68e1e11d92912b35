"""A real Prometheus (Debian's `prometheus`) scrapes a live fluidbox — gunicorn with two
workers and the django-q2 worker — through `/metrics` with the bearer token while a scripted
workload runs; afterwards every counter it stored equals what the ledger holds."""

import json
import secrets
import shutil
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from governance.models import Approval, ApprovalStatus, NotificationDelivery
from governance.services.notifications import channel_create_webhook
from governance.services.orgs import api_key_create
from governance.services.policies import policy_save
from ledger.models import Event
from ledger.sinks import sink_create
from tests.conftest import TEST_POLICY, run_body
from tests.governance.broker.support import connect
from tests.observability.test_audit_sinks import Streamer
from tests.support.receivers import SinkReceiver
from tests.support.servers import WebServer, Worker, free_port

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("prometheus") is None, reason="apt-get install prometheus"),
]

TOKEN = "metrics-" + secrets.token_hex(12)
POLICY = TEST_POLICY.replace("rules:\n", 'rules:\n  - pattern: "crm.*"\n    action: ALWAYS\n', 1)
QUICK = POLICY.replace("name: default", "name: quick").replace(
    "approval_timeout: 300", "approval_timeout: 1"
)
PERMISSION_ROUTE = "v1/runs/<str:run_id>/permission"
OPS = Path(__file__).resolve().parents[2] / "ops"
ALERTS = OPS / "prometheus" / "fluidbox-alerts.yml"
DASHBOARD = OPS / "grafana" / "fluidbox.json"


class Prometheus:
    """`prometheus` on 127.0.0.1 with a scrape config written here, data in a temp dir."""

    def __init__(self, tmp: Path, target: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = tmp / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            f"rule_files: ['{ALERTS}']\n"
            "scrape_configs:\n"
            "  - job_name: fluidbox\n"
            "    metrics_path: /metrics\n"
            f"    authorization:\n      type: Bearer\n      credentials: {TOKEN}\n"
            f"    static_configs:\n      - targets: ['{target}']\n"
        )
        self.log = tmp / "prometheus.log"
        self.args = [
            "prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp / 'prometheus-data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--log.level=warn",
        ]

    def __enter__(self):
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()[-2000:]
            try:
                if httpx.get(f"{self.url}/-/ready", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError("prometheus did not become ready")

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(timeout=30)

    def query(self, expression: str) -> dict[tuple, float]:
        """An instant query: {label values (sorted by name): value}."""
        response = httpx.get(f"{self.url}/api/v1/query", params={"query": expression}, timeout=10)
        body = response.json()
        assert body["status"] == "success", body
        return {
            tuple(value for _, value in sorted(item["metric"].items())): float(item["value"][1])
            for item in body["data"]["result"]
        }

    def nonzero(self, expression: str) -> dict[tuple, float]:
        """The query's series that counted something (every known label set starts at 0)."""
        return {labels: value for labels, value in self.query(expression).items() if value}

    def firing(self) -> set[str]:
        alerts = httpx.get(f"{self.url}/api/v1/alerts", timeout=10).json()["data"]["alerts"]
        return {alert["labels"]["alertname"] for alert in alerts if alert["state"] == "firing"}

    def scraped_after(self, moment: float) -> bool:
        last = self.query('timestamp(up{job="fluidbox"})')
        up = self.query('up{job="fluidbox"}')
        return bool(last) and min(last.values()) > moment and set(up.values()) == {1.0}


def wait_for(condition, *, timeout=90.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class Workload:
    """Everything through the live server, so the test process counts nothing itself."""

    def __init__(self, server, operator_key: str, approver_key: str) -> None:
        self.server = server
        self.operator = {"Authorization": f"Bearer {operator_key}"}
        self.approver = {"Authorization": f"Bearer {approver_key}"}
        self.permission_posts = 0

    def post(self, path: str, body: dict, headers: dict) -> httpx.Response:
        return httpx.post(f"{self.server.url}{path}", json=body, headers=headers, timeout=60)

    def run(self, **overrides) -> tuple[str, dict]:
        response = self.post("/v1/runs", run_body(**overrides), self.operator)
        assert response.status_code == 201, response.text
        body = response.json()
        return body["id"], {"Authorization": f"Bearer {body['session_token']}"}

    def gate(self, run, call_id: str, tool: str, arguments: dict) -> dict:
        run_id, token = run
        body = {"session_id": "s", "tool_call_id": call_id, "tool": tool, "arguments": arguments}
        response = self.post(f"/v1/runs/{run_id}/permission", body, token)
        self.permission_posts += 1
        assert response.status_code == 200, response.text
        return response.json()

    def broker(self, run, call_id: str, tool: str, arguments: dict) -> dict:
        run_id, token = run
        body = {"session_id": "s", "tool_call_id": call_id, "arguments": arguments}
        response = self.post(f"/v1/runs/{run_id}/tools/{tool}/call", body, token)
        assert response.status_code == 200, response.text
        return response.json()

    def decide(self, approval_id: str, decision: str) -> None:
        path = f"/v1/approvals/{approval_id}/decision"
        response = self.post(path, {"decision": decision}, self.approver)
        assert response.status_code == 200, response.text

    def reserve(self, run, key: str, tokens: int) -> int:
        run_id, token = run
        body = {"request_key": key, "max_output_tokens": tokens, "input_tokens_upper_bound": 0}
        return self.post(f"/v1/runs/{run_id}/budget/reservations", body, token).status_code


def script(work: Workload) -> None:
    supervised = work.run(connections=["crm"])
    for index in range(3):
        assert (
            work.gate(supervised, f"read-{index}", "read_file", {"path": "/workspace/a"})[
                "decision"
            ]
            == "allow"
        )
    assert work.gate(supervised, "read-0", "read_file", {"path": "/workspace/a"})  # a retry
    assert work.gate(supervised, "rm", "run_command", {"command": "rm -rf /"})["decision"] == "deny"
    assert (
        work.gate(supervised, "etc", "write_file", {"path": "/etc/x", "content": "x"})["source"]
        == "policy"
    )
    assert work.gate(supervised, "nope", "format_disk", {})["source"] == "capability"
    assert work.gate(supervised, "bad", "read_file", {"path": 5})["source"] == "schema"
    approve = work.gate(supervised, "mail-1", "send_email", {"to": "a@example.com"})
    deny = work.gate(supervised, "mail-2", "send_email", {"to": "b@example.com"})
    work.gate(supervised, "mail-3", "send_email", {"to": "c@example.com"})  # left pending
    work.decide(approve["approval"]["id"], "approve")
    work.decide(deny["approval"]["id"], "deny")
    assert work.broker(supervised, "crm-1", "crm.lookup", {"id": "1"})["broker"]["status"] == (
        "succeeded"
    )
    assert (
        work.broker(supervised, "crm-2", "crm.lookup", {"respond_error": True})["broker"]["status"]
        == "tool_error"
    )
    assert [
        work.reserve(supervised, "r-1", 50_000),
        work.reserve(supervised, "r-2", 40_000),
        work.reserve(supervised, "r-3", 20_000),
    ] == [201, 201, 409]

    autonomous = work.run(autonomy="autonomous")
    assert (
        work.gate(autonomous, "mail", "send_email", {"to": "a@example.com"})["decision"] == "deny"
    )
    # A command over the matcher's bound: an error, not a rule, denies it (failed closed).
    huge = {"command": "ls " + "a" * 70_000}
    assert work.gate(autonomous, "huge", "run_command", huge)["decision"] == "deny"

    quick = work.run(policy="quick")
    timing_out = work.gate(quick, "slow", "send_email", {"to": "a@example.com"})
    time.sleep(1.2)  # past its expiry: the retry (or the worker) settles it as timed out
    assert work.gate(quick, "slow", "send_email", {"to": "a@example.com"})["decision"] == "deny"
    assert Approval.objects.get(pk=timing_out["approval"]["id"]).status == "timed_out"


def children_of(pid: int) -> set[str]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
        if parent == pid:
            found.add(stat.parent.name)
    return found


def worker_children(worker) -> set[str]:
    # qcluster's main process forks a sentinel, which forks the task workers.
    children = children_of(worker.process.pid)
    return children | {pid for child in children for pid in children_of(int(child))}


def writers(directory: Path) -> set[str]:
    return {path.stem.rsplit("_", 1)[1] for path in directory.glob("counter_*.db")}


def burst(work: Workload, done) -> None:
    """Concurrent gate calls until both gunicorn workers have answered some (the kernel
    decides which worker accepts a connection)."""
    run = work.run()

    def call(call_id: str) -> dict:
        return work.gate(run, call_id, "read_file", {"path": "/workspace/w"})

    for round_ in range(20):
        if done():
            return
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(call, [f"burst-{round_}-{i}" for i in range(16)]))
    assert done(), "one gunicorn worker answered every request"


def dashboard_queries() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [
        target["expr"].replace("$__rate_interval", "1m")
        for panel in panels
        for target in panel.get("targets", [])
    ]


def ledger_counts():
    events = list(Event.objects.all())
    by_type = Counter(event.type for event in events)
    gate = Counter()
    for event in events:
        if event.type == "tool.decision" and "approval_id" not in event.data:
            gate[(event.data["decision"], event.data["source"] or "none")] += 1
        elif event.type == "approval.requested":
            gate[("pending", "approval")] += 1
    decided = Counter(e.data["outcome"] for e in events if e.type == "approval.decided")
    brokered = Counter(
        (e.data["tool"].partition(".")[0], e.data["status"])
        for e in events
        if e.type == "tool.brokered"
    )
    fail_closed = Counter(e.data["fail_closed"] for e in events if e.data.get("fail_closed"))
    return by_type, gate, decided, brokered, fail_closed


def test_prometheus_counters_equal_the_ledger(
    tmp_path, transactional_db, org, approver, echo_server
):
    policy_save(org=org, text=POLICY, author=None)
    policy_save(org=org, text=QUICK, author=None)
    operator_key = api_key_create(org=org, name="ci").plaintext
    approver_key = api_key_create(org=org, name="alice's", user=approver).plaintext
    notified = SinkReceiver().start()
    siem = SinkReceiver().start()
    sink_create(org=org, name="siem", kind="jsonl", url=f"http://127.0.0.1:{siem.port}/")
    channel_create_webhook(
        org=org, name="ops", url=f"http://127.0.0.1:{notified.port}/hook", secret="s3cret-hook"
    )
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    env = {"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "FLUIDBOX_METRICS_TOKEN": TOKEN}
    server = WebServer(tmp_path, workers=2, threads=16, **env)
    worker = Worker(tmp_path, **env)
    streamer = Streamer(tmp_path, **env)
    with server, worker, streamer, Prometheus(tmp_path, f"127.0.0.1:{server.port}") as prometheus:
        from tests.conftest import Api

        connect(Api(operator_key), echo_server)  # in this process: no ledger events
        # Prometheus has seen every series at zero before anything happens (as it has in a
        # deployment that runs for a while): an increase from the first sample is visible.
        started = time.time()
        wait_for(lambda: prometheus.scraped_after(started), what="a first scrape")
        work = Workload(server, operator_key, approver_key)
        script(work)
        web_workers = children_of(server.process.pid)
        assert len(web_workers) == 2
        burst(work, lambda: web_workers <= writers(metrics_dir))
        # The worker sends one notification per approval asked for.
        asked = Approval.objects.count()
        wait_for(
            lambda: NotificationDelivery.objects.filter(status="sent").count() == asked,
            what="the worker's notifications",
        )
        wait_for(lambda: len(siem.lines()) >= Event.objects.count(), what="the SIEM to catch up")
        finished = time.time()
        wait_for(lambda: prometheus.scraped_after(finished), what="a scrape after the workload")

        by_type, gate, decided, brokered, fail_closed = ledger_counts()
        assert prometheus.nonzero("sum by (type) (fluidbox_ledger_events_appended_total)") == {
            (kind,): float(n) for kind, n in by_type.items()
        }
        assert prometheus.nonzero("sum by (decision, source) (fluidbox_gate_decisions_total)") == {
            key: float(n) for key, n in gate.items()
        }
        assert sum(gate.values()) == by_type["tool.requested"]
        assert prometheus.nonzero("sum(fluidbox_gate_decision_duration_seconds_count)") == {
            (): float(sum(gate.values()))
        }
        assert prometheus.nonzero("sum by (outcome) (fluidbox_approval_wait_seconds_count)") == {
            (outcome,): float(n) for outcome, n in decided.items()
        }
        assert set(decided) == {"approved", "denied", "timed_out"}
        assert prometheus.nonzero("sum(fluidbox_approval_timeouts_total)") == {
            (): float(decided["timed_out"])
        }
        assert prometheus.nonzero(
            "sum by (connection, outcome) (fluidbox_brokered_calls_total)"
        ) == {key: float(n) for key, n in brokered.items()}
        assert prometheus.nonzero("sum by (outcome) (fluidbox_budget_reservations_total)") == {
            ("reserved",): float(by_type["budget.reserved"]),
            ("denied",): float(by_type["budget.denied"]),
        }
        assert prometheus.nonzero("sum by (cause) (fluidbox_gate_fail_closed_total)") == {
            (cause,): float(n) for cause, n in fail_closed.items()
        }
        assert fail_closed["policy_error"] == 1
        pending = Approval.objects.filter(status=ApprovalStatus.PENDING).count()
        assert pending == 1
        assert prometheus.query("sum(fluidbox_approvals_pending)") == {(): 1.0}
        assert prometheus.query("sum by (sink) (fluidbox_audit_sink_lag_events)") == {
            ("acme/siem",): 0.0
        }
        assert prometheus.query("sum by (sink) (fluidbox_audit_sink_events_delivered_total)") == {
            ("acme/siem",): float(Event.objects.count())
        }
        assert prometheus.query("sum by (state) (fluidbox_vault_state)") == {
            ("machine-key",): 1.0,
            ("sealed",): 0.0,
            ("unsealed",): 0.0,
        }
        # Sent by the django-q2 worker's processes, added up by the web workers' /metrics.
        assert prometheus.nonzero(
            "sum by (channel, outcome) (fluidbox_notification_deliveries_total)"
        ) == {("webhook", "sent"): float(asked)}
        assert prometheus.query(
            f'sum(fluidbox_http_requests_total{{route="{PERMISSION_ROUTE}"}})'
        ) == {(): float(work.permission_posts)}
        # The shipped alert rules load, and the failed-closed call above fires its alert.
        wait_for(lambda: "FluidboxFailedClosed" in prometheus.firing(), what="the alert")
        assert "FluidboxVaultSealed" not in prometheus.firing()
        # Every query of the shipped Grafana dashboard is valid PromQL that finds its data.
        for expression in dashboard_queries():
            assert prometheus.query(expression) != {}, expression
        # What was added up came from both gunicorn workers and the django-q2 worker.
        assert web_workers <= writers(metrics_dir)
        assert worker_children(worker) & writers(metrics_dir)
    notified.stop()
    siem.stop()


def test_metrics_need_the_token_or_the_metrics_listener(tmp_path, transactional_db):
    listener = f"127.0.0.1:{free_port()}"
    with WebServer(tmp_path, workers=1, threads=4, FLUIDBOX_METRICS_BIND=listener) as server:
        # No token configured: refused on the main address, whatever is sent.
        refused = httpx.get(f"{server.url}/metrics", headers={"Authorization": "Bearer x"})
        assert refused.status_code == 401
        assert refused.json()["error"] == "unauthenticated"
        assert "fluidbox_" not in refused.text
        # The metrics listener serves /metrics without a token, and nothing else.
        served = httpx.get(f"http://{listener}/metrics")
        assert served.status_code == 200
        assert "fluidbox_approvals_pending" in served.text
        assert httpx.get(f"http://{listener}/v1/schema").status_code == 404
        assert httpx.get(f"http://{listener}/admin/login/").status_code == 404
        # A Host header naming the listener does not make the main address the listener.
        spoofed = httpx.get(f"{server.url}/metrics", headers={"Host": listener})
        assert spoofed.status_code == 401
    with WebServer(tmp_path, workers=1, threads=4, FLUIDBOX_METRICS_TOKEN=TOKEN) as server:
        assert httpx.get(f"{server.url}/metrics").status_code == 401
        wrong = httpx.get(f"{server.url}/metrics", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        right = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert right.status_code == 200
        assert right.headers["Content-Type"].startswith("text/plain")
        assert "# TYPE fluidbox_http_requests_total counter" in right.text
        assert 'fluidbox_vault_state{state="machine-key"} 1.0' in right.text
