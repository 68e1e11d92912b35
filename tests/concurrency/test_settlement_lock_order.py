"""Settling an approval races the other writers of its run: a retry of the very call being
decided, and the run's finish. Every writer takes the run's ledger counter before the rows
its events record (`ledger.services.chain_lock`); a settlement that updated the approval
and the call first, and only then waited for the counter, deadlocked with a retry holding
the counter while its insert waited on that update, and the approver got a 503.

Each race is made to happen in its worst order: another connection holds the counter, the
writers queue up behind it in the order that used to deadlock, then it lets go."""

import threading

import psycopg
import pytest
from django.db import connection

from governance.models import Approval, ToolCall
from ledger.chain_checks import chain_verify
from ledger.models import Event, RunCounter
from tests.conftest import Api
from tests.support.waiting import wait_until_waiting_on_locks

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def ask(runner: Api, run_id: str, call_id: str) -> dict:
    response = runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": "s-1",
            "tool_call_id": call_id,
            "tool": "send_email",
            "arguments": {"to": f"{call_id}@example.com"},
        },
    )
    assert response.status_code == 200, response.content
    return response.json()


def counter_held(run_id: str) -> psycopg.Connection:
    """Another connection holding the run's counter row, as a writer in the middle of its
    append holds it (released by rolling back)."""
    settings = connection.settings_dict
    held = psycopg.connect(
        host=settings["HOST"] or "127.0.0.1",
        port=settings["PORT"] or 5432,
        dbname=settings["NAME"],
        user=settings["USER"] or "postgres",
        password=settings["PASSWORD"] or None,
    )
    held.execute(
        f"UPDATE {RunCounter._meta.db_table} SET last_seq = last_seq WHERE run_id = %s",
        [run_id],
    )
    return held


def race_behind_the_counter(run_id: str, first, second) -> tuple:
    """`first` and then `second` (each a request, in a thread of its own) queued in that
    order behind another connection's hold of the run's counter, which then lets go.
    Returns their answers."""
    held = counter_held(run_id)
    answers: list = [None, None]
    threads = []

    def send(index: int, request) -> None:
        try:
            answers[index] = request()
        finally:
            connection.close()

    try:
        for index, request in enumerate((first, second)):
            threads.append(threading.Thread(target=send, args=(index, request)))
            threads[-1].start()
            wait_until_waiting_on_locks(index + 1, f"request {index + 1} to queue for the counter")
    finally:
        held.rollback()
        held.close()
    for thread in threads:
        thread.join()
    return tuple(answers)


def types_of(run_id: str) -> list[str]:
    return list(Event.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True))


def test_a_retry_of_the_call_being_decided_never_deadlocks_the_decision(make_run, approver):
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, "c-1")["approval"]["id"]
    # The retry queues for the counter first (it records a pending call again, under the
    # counter's lock, and only then meets the unique index), the approver's decision after.
    retry, decision = race_behind_the_counter(
        run_id,
        lambda: ask(Api(runner.token), run_id, "c-1"),
        lambda: Api(user=approver).post(
            f"/v1/approvals/{approval_id}/decision", {"decision": "approve"}
        ),
    )

    assert decision.status_code == 200, decision.content
    assert decision.json()["won"] is True
    assert retry["decision"] in {"pending", "allow"}
    assert Approval.objects.get(pk=approval_id).status == "approved"
    assert ToolCall.objects.filter(run_id=run_id).count() == 1
    assert ToolCall.objects.get(run_id=run_id).decision == "allow"
    types = types_of(run_id)
    assert types.count("approval.decided") == 1 and types.count("tool.decision") == 1
    assert chain_verify(run_id) == []
    # The retry now gets the decision.
    assert ask(runner, run_id, "c-1")["decision"] == "allow"


def test_a_decision_racing_the_runs_finish_never_deadlocks_either(make_run, operator, approver):
    run_id, runner = make_run()
    first = ask(runner, run_id, "c-1")["approval"]["id"]
    second = ask(runner, run_id, "c-2")["approval"]["id"]
    # The finish queues first (it denies every pending approval, then records the end),
    # the approver's decision on the second approval after it.
    finish, decision = race_behind_the_counter(
        run_id,
        lambda: Api(operator.token).post(f"/v1/runs/{run_id}/finish"),
        lambda: Api(user=approver).post(
            f"/v1/approvals/{second}/decision", {"decision": "approve"}
        ),
    )

    assert finish.status_code == 200, finish.content
    # The finish came first and denied both; the approver is told what was decided.
    assert decision.status_code == 200, decision.content
    assert decision.json()["won"] is False
    assert decision.json()["approval"]["status"] == "denied"
    statuses = dict(Approval.objects.filter(run_id=run_id).values_list("pk", "status"))
    assert statuses == {int(first): "denied", int(second): "denied"}
    types = types_of(run_id)
    assert types.count("approval.decided") == 2 and types.count("tool.decision") == 2
    assert types[-1] == "run.finished"
    assert chain_verify(run_id) == []
