"""Approvals against live servers: one winner, prompt wake-ups, restarts, timeouts."""

import threading
import time
from datetime import timedelta

import httpx
import pytest
from django.db import connection
from django.utils import timezone

from governance.models import Approval, ToolCall
from governance.services.orgs import api_key_create
from governance.services.wakeup import CHANNEL
from ledger.chain_checks import chain_verify
from ledger.models import Event
from tests.concurrency.conftest import fire_at_once
from tests.support.servers import WebServer, Worker
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.long]


MAX_WAIT = 30  # the longest wait_seconds the gate accepts


def gate_body(call_id: str, wait: float, to: str = "bob@example.com") -> dict:
    return {
        "session_id": "s-1",
        "tool_call_id": call_id,
        "tool": "send_email",
        "arguments": {"to": to},
        "wait_seconds": wait,
    }


def gate(server, run_id, token, *, call_id="c-1", wait=0.0, to="bob@example.com"):
    return httpx.post(
        f"{server.url}/v1/runs/{run_id}/permission",
        json=gate_body(call_id, wait, to),
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    )


def new_run(operator, **overrides):
    from tests.conftest import run_body

    response = operator.post("/v1/runs", run_body(**overrides))
    assert response.status_code == 201
    return response.json()["id"], response.json()["session_token"]


def types(run_id):
    return list(Event.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True))


def race_deciders(server, operator, org, approver) -> tuple[str, list[httpx.Response]]:
    run_id, token = new_run(operator)
    approval_id = gate(server, run_id, token).json()["approval"]["id"]
    keys = [api_key_create(org=org, user=approver, name=f"k{i}").plaintext for i in range(20)]

    def decide(client, index):
        return client.post(
            f"{server.url}/v1/approvals/{approval_id}/decision",
            json={"decision": "approve" if index % 2 else "deny"},
            headers={"Authorization": f"Bearer {keys[index]}"},
        )

    return run_id, fire_at_once(20, decide)


def test_twenty_concurrent_deciders_make_one_winner(web_server, operator, org, approver):
    run_id, responses = race_deciders(web_server, operator, org, approver)
    assert {r.status_code for r in responses} == {200}
    assert sum(1 for r in responses if r.json()["won"]) == 1
    assert types(run_id).count("approval.decided") == 1
    assert types(run_id).count("tool.decision") == 1
    final = {r.json()["approval"]["status"] for r in responses}
    assert len(final) == 1
    assert chain_verify(run_id) == []


@pytest.mark.sqlite
def test_control_sqlite_without_its_options_fails_the_same_race(
    tmp_path, transactional_db, operator, org, approver
):
    # Proves the test above can fail on SQLite: without IMMEDIATE transactions and the lock
    # timeout, concurrent deciders hit "database is locked" and get 5xx.
    bare = "tests.concurrency.settings_sqlite_bare"
    with WebServer(tmp_path, workers=2, threads=48, DJANGO_SETTINGS_MODULE=bare) as server:
        failed = False
        for _ in range(5):
            _, responses = race_deciders(server, operator, org, approver)
            if any(r.status_code >= 500 for r in responses):
                failed = True
                break
    assert failed, "bare SQLite never failed the race: the test above proves nothing there"


def listening_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE query = %s", [f"LISTEN {CHANNEL}"]
        )
        return cursor.fetchone()[0]


def sent_requests(counter: list) -> dict:
    """httpx extensions that count a request once its body is on the wire."""

    def trace(event_name, info):
        if event_name == "http11.send_request_body.complete":
            counter.append(1)

    return {"trace": trace}


@pytest.mark.postgres  # LISTEN/NOTIFY is what wakes waiters in other processes
def test_a_waiter_is_woken_by_a_decision_in_another_process_not_by_a_recheck(
    tmp_path, transactional_db, operator, org, approver
):
    # Two separate servers: the waiter parks on one, the decision lands on the other. The
    # waiter's server re-reads the row only every 60 s, longer than the wait: only the
    # notification can bring the answer back before the wait ends.
    waiting_server = WebServer(tmp_path, workers=1, threads=16, FLUIDBOX_WAKE_RECHECK_SECONDS="60")
    deciding_server = WebServer(tmp_path, workers=1, threads=16)
    with waiting_server, deciding_server:
        run_id, token = new_run(operator)
        approval_id = gate(waiting_server, run_id, token).json()["approval"]["id"]
        key = api_key_create(org=org, user=approver, name="decider").plaintext
        result = {}

        def wait():
            result["response"] = gate(waiting_server, run_id, token, wait=MAX_WAIT)
            result["returned_at"] = time.monotonic()

        waiter = threading.Thread(target=wait)
        waiter.start()
        # The waiting process starts its listener when its first wait begins.
        wait_until(lambda: listening_backends() == 1, "the waiter's server to LISTEN")
        decided_at = time.monotonic()
        decision = httpx.post(
            f"{deciding_server.url}/v1/approvals/{approval_id}/decision",
            json={"decision": "approve"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )
        assert decision.status_code == 200
        waiter.join()
        assert result["response"].json()["decision"] == "allow"
        assert result["returned_at"] - decided_at < MAX_WAIT / 2


def test_a_retry_after_a_server_restart_reattaches_to_the_same_approval(
    tmp_path, transactional_db, operator, org, approver
):
    server = WebServer(tmp_path, workers=1, threads=16)
    server.start()
    try:
        run_id, token = new_run(operator)
        first = gate(server, run_id, token).json()
        outcome = {}
        sent = []

        def wait():
            try:
                with httpx.Client(timeout=120) as client:
                    outcome["response"] = client.post(
                        f"{server.url}/v1/runs/{run_id}/permission",
                        json=gate_body("c-1", MAX_WAIT),
                        headers={"Authorization": f"Bearer {token}"},
                        extensions=sent_requests(sent),
                    )
            except httpx.HTTPError as error:
                outcome["error"] = error

        waiter = threading.Thread(target=wait)
        waiter.start()
        wait_until(lambda: sent, "the waiting call to be sent")
        server.stop()  # the waiting call is cut off
        waiter.join()
        assert "error" in outcome or outcome["response"].status_code >= 500
        server.start()
        again = gate(server, run_id, token).json()
        assert again["approval"]["id"] == first["approval"]["id"]
        key = api_key_create(org=org, user=approver, name="decider").plaintext
        httpx.post(
            f"{server.url}/v1/approvals/{first['approval']['id']}/decision",
            json={"decision": "approve"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )
        final = gate(server, run_id, token).json()
        assert final["decision"] == "allow"
        assert Approval.objects.filter(run_id=run_id).count() == 1
        assert ToolCall.objects.filter(run_id=run_id).count() == 1
        assert types(run_id).count("approval.requested") == 1
        assert types(run_id).count("tool.requested") == 1
        assert types(run_id).count("tool.decision") == 1
    finally:
        server.stop()


def test_200_parked_waiters_do_not_starve_other_gate_calls(tmp_path, transactional_db, operator):
    # One token parks all 200 here, so its caps of waits (its own and its organization's)
    # are raised to match (the caps are tested in tests/security/test_wait_caps.py).
    server = WebServer(
        tmp_path,
        workers=2,
        threads=128,
        FLUIDBOX_WAITS_PER_CREDENTIAL="200",
        FLUIDBOX_WAITS_PER_ORG="200",
        FLUIDBOX_PENDING_APPROVALS_PER_RUN="200",
    )
    server.start()
    try:
        run_id, token = new_run(operator)
        for index in range(200):
            assert gate(server, run_id, token, call_id=f"p-{index}").json()["decision"] == "pending"
        parked = []
        sent = []

        def park(index):
            with httpx.Client(timeout=120) as client:
                parked.append(
                    client.post(
                        f"{server.url}/v1/runs/{run_id}/permission",
                        json=gate_body(f"p-{index}", MAX_WAIT),
                        headers={"Authorization": f"Bearer {token}"},
                        extensions=sent_requests(sent),
                    )
                )

        threads = [threading.Thread(target=park, args=(i,)) for i in range(200)]
        for thread in threads:
            thread.start()
        wait_until(lambda: len(sent) == 200, "all 200 waits to be sent")
        # Sent after the 200 waits. A server whose threads they held would answer it only
        # when one of them comes back, at the end of its 30 s wait: it must come back while
        # every wait is still parked (an order, not a time a busy machine may overrun).
        other = httpx.post(
            f"{server.url}/v1/runs/{run_id}/permission",
            json={
                "session_id": "s-2",
                "tool_call_id": "x",
                "tool": "run_command",
                "arguments": {"command": "git status"},
            },
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        still_parked = not parked
        assert other.json()["decision"] == "allow"
        assert still_parked, "the other call was answered only after a parked wait came back"
        for thread in threads:
            thread.join()
        assert len(parked) == 200
        answers = {(r.status_code, r.json().get("decision") or r.text) for r in parked}
        assert answers == {(200, "pending")}, server.log()[-4000:]
    finally:
        server.stop()


def test_timeouts_are_settled_by_the_worker_and_by_the_sweeper_after_a_restart(
    tmp_path, transactional_db, operator, org
):
    from governance.services.policies import policy_save

    policy_save(
        org=org,
        text='name: default\napproval_timeout: 2\nrules:\n  - {pattern: "send_email:*", '
        "action: ASK}\n",
        author=None,
    )
    run_id, token = new_run(operator)
    server = WebServer(tmp_path, workers=1, threads=8)
    server.start()
    worker = Worker(tmp_path)
    try:
        # With the worker stopped, this approval expires unattended.
        missed = gate(server, run_id, token, call_id="missed").json()["approval"]["id"]
        # Lose its timeout task too (a worker crash, a wiped queue): only the sweeper is left.
        from django_q.models import OrmQ

        timeouts = [
            q.pk
            for q in OrmQ.objects.all()
            if q.task["func"] == "governance.tasks.approval_timeout"
            and q.task["args"] == (int(missed),)
        ]
        assert OrmQ.objects.filter(pk__in=timeouts).delete()[0] == 1
        worker.start()
        watched = gate(server, run_id, token, call_id="watched").json()["approval"]["id"]
        # The watched one at expiry; the missed one only by the minutely sweep (within 90 s).
        wait_until(
            lambda: not Approval.objects.filter(pk__in=[missed, watched], status="pending"),
            "the worker and the sweeper to settle both approvals",
        )
        assert Approval.objects.get(pk=missed).status == "timed_out"
        assert Approval.objects.get(pk=watched).status == "timed_out"
        decided = Event.objects.filter(run_id=run_id, type="approval.decided")
        assert {e.data["outcome"] for e in decided} == {"timed_out"}
        answer = gate(server, run_id, token, call_id="watched").json()
        assert answer["reason"] == "approval timed out"
    finally:
        worker.stop()
        server.stop()


def test_an_expired_approval_is_settled_by_the_waiting_call_at_expiry(web_server, operator):
    run_id, token = new_run(operator)
    approval_id = gate(web_server, run_id, token).json()["approval"]["id"]
    Approval.objects.filter(pk=approval_id).update(
        expires_at=timezone.now() + timedelta(seconds=1.5)
    )
    started = time.monotonic()
    answer = gate(web_server, run_id, token, wait=MAX_WAIT).json()
    # At expiry, not at the end of the wait it asked for.
    assert time.monotonic() - started < MAX_WAIT / 2
    assert (answer["decision"], answer["reason"]) == ("deny", "approval timed out")
