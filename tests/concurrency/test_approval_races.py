"""Approvals against live servers: one winner, prompt wake-ups, restarts, timeouts."""

import threading
import time
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from governance.models import Approval, ToolCall
from governance.services.orgs import api_key_create
from ledger.models import Event
from ledger.services import chain_verify
from tests.concurrency.conftest import fire_at_once
from tests.support.servers import WebServer, Worker

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def gate(server, run_id, token, *, call_id="c-1", wait=0.0, to="bob@example.com", timeout=60):
    return httpx.post(
        f"{server.url}/v1/runs/{run_id}/permission",
        json={
            "session_id": "s-1",
            "tool_call_id": call_id,
            "tool": "send_email",
            "arguments": {"to": to},
            "wait_seconds": wait,
        },
        headers={"Authorization": f"Bearer {token}"},
        timeout=timeout,
    )


def new_run(operator, **overrides):
    from tests.conftest import run_body

    response = operator.post("/v1/runs", run_body(**overrides))
    assert response.status_code == 201
    return response.json()["id"], response.json()["session_token"]


def types(run_id):
    return list(Event.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True))


def test_twenty_concurrent_deciders_make_one_winner(web_server, operator, org, approver):
    run_id, token = new_run(operator)
    approval_id = gate(web_server, run_id, token).json()["approval"]["id"]
    keys = [api_key_create(org=org, user=approver, name=f"k{i}").plaintext for i in range(20)]

    def decide(client, index):
        return client.post(
            f"{web_server.url}/v1/approvals/{approval_id}/decision",
            json={"decision": "approve" if index % 2 else "deny"},
            headers={"Authorization": f"Bearer {keys[index]}"},
        )

    responses = fire_at_once(20, decide)
    assert {r.status_code for r in responses} == {200}
    assert sum(1 for r in responses if r.json()["won"]) == 1
    assert types(run_id).count("approval.decided") == 1
    assert types(run_id).count("tool.decision") == 1
    final = {r.json()["approval"]["status"] for r in responses}
    assert len(final) == 1
    assert chain_verify(run_id) == []


def test_a_waiter_is_woken_within_a_second_of_a_decision_in_another_process(
    tmp_path, transactional_db, operator, org, approver
):
    # Two separate servers: the waiter parks on one, the decision lands on the other.
    waiting_server = WebServer(tmp_path, workers=1, threads=16)
    deciding_server = WebServer(tmp_path, workers=1, threads=16)
    waiting_server.start()
    deciding_server.start()
    try:
        run_id, token = new_run(operator)
        approval_id = gate(waiting_server, run_id, token).json()["approval"]["id"]
        key = api_key_create(org=org, user=approver, name="decider").plaintext
        result = {}

        def wait():
            started = time.monotonic()
            result["response"] = gate(waiting_server, run_id, token, wait=20)
            result["returned_at"] = time.monotonic()
            result["started_at"] = started

        waiter = threading.Thread(target=wait)
        waiter.start()
        time.sleep(1.5)  # the waiter is parked
        decided_at = time.monotonic()
        decision = httpx.post(
            f"{deciding_server.url}/v1/approvals/{approval_id}/decision",
            json={"decision": "approve"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        )
        assert decision.status_code == 200
        waiter.join(timeout=25)
        assert result["response"].json()["decision"] == "allow"
        assert result["returned_at"] - decided_at < 1.0
        assert result["returned_at"] - result["started_at"] < 19
    finally:
        waiting_server.stop()
        deciding_server.stop()


def test_a_retry_after_a_server_restart_reattaches_to_the_same_approval(
    tmp_path, transactional_db, operator, org, approver
):
    server = WebServer(tmp_path, workers=1, threads=16)
    server.start()
    try:
        run_id, token = new_run(operator)
        first = gate(server, run_id, token).json()
        outcome = {}

        def wait():
            try:
                outcome["response"] = gate(server, run_id, token, wait=20)
            except httpx.HTTPError as error:
                outcome["error"] = error

        waiter = threading.Thread(target=wait)
        waiter.start()
        time.sleep(1)
        server.stop()
        waiter.join(timeout=30)
        assert "error" in outcome or outcome["response"].status_code >= 500
        server.start()
        again = gate(server, run_id, token).json()
        assert again["approval"]["id"] == first["approval"]["id"]
        key = api_key_create(org=org, user=approver, name="decider").plaintext
        httpx.post(
            f"{server.url}/v1/approvals/{first['approval']['id']}/decision",
            json={"decision": "approve"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
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
    # One token parks all 200 here, so its cap of waits is raised to match (the cap itself
    # is tested in tests/security/test_wait_caps.py).
    server = WebServer(tmp_path, workers=2, threads=128, FLUIDBOX_WAITS_PER_CREDENTIAL="200")
    server.start()
    try:
        run_id, token = new_run(operator)
        for index in range(200):
            assert gate(server, run_id, token, call_id=f"p-{index}").json()["decision"] == "pending"
        parked = []

        def park(index):
            parked.append(gate(server, run_id, token, call_id=f"p-{index}", wait=8))

        threads = [threading.Thread(target=park, args=(i,)) for i in range(200)]
        for thread in threads:
            thread.start()
        time.sleep(1.5)
        started = time.monotonic()
        other = httpx.post(
            f"{server.url}/v1/runs/{run_id}/permission",
            json={
                "session_id": "s-2",
                "tool_call_id": "x",
                "tool": "run_command",
                "arguments": {"command": "git status"},
            },
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        answered_in = time.monotonic() - started
        assert other.json()["decision"] == "allow"
        assert answered_in < 5
        for thread in threads:
            thread.join(timeout=30)
        assert len(parked) == 200
        assert {r.json()["decision"] for r in parked} == {"pending"}
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
        from django_q.models import Schedule

        assert Schedule.objects.filter(name=f"fluidbox: approval {missed} timeout").delete()[0] == 1
        worker.start()
        watched = gate(server, run_id, token, call_id="watched").json()["approval"]["id"]
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            statuses = set(
                Approval.objects.filter(pk__in=[missed, watched]).values_list("status", flat=True)
            )
            if statuses == {"timed_out"}:
                break
            time.sleep(1)
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
    answer = gate(web_server, run_id, token, wait=20).json()
    assert time.monotonic() - started < 5
    assert (answer["decision"], answer["reason"]) == ("deny", "approval timed out")
