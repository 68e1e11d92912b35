"""Races on a run's budget and its approvals, from the attacker's side.

The run token fires reservations while (or just before) the same token finishes the run.
Nothing may be booked after `run.finished`: the finish voids the token, so a reservation
that slips in behind it holds tokens for a run that can never settle them and writes a
ledger event the run's end was supposed to close. And an approval is never granted once it
has expired, even to a decision that was read before the expiry and then waited for the
run's counter (held by the run's own appends) until after it."""

import threading

import pytest
from django.db import connection

from governance.models import Approval, BudgetReservation, RunBudget
from ledger.chain_checks import chain_verify
from ledger.models import Event
from tests.concurrency.conftest import fire_at_once
from tests.concurrency.test_settlement_lock_order import (
    counter_held,
    race_behind_the_counter,
    types_of,
)
from tests.conftest import Api, run_body
from tests.governance.gate.test_pipeline import ask
from tests.support.waiting import wait_until_waiting_on_locks


def reserve(runner: Api, run_id: str, key: str, out: int):
    return runner.post(
        f"/v1/runs/{run_id}/budget/reservations",
        {"request_key": key, "max_output_tokens": out, "input_tokens_upper_bound": 0},
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_reservation_queued_behind_its_runs_finish_is_refused_and_books_nothing(make_run):
    run_id, runner = make_run(budget_tokens=1000)
    # The finish queues for the counter first; the reservation, past its token check while
    # the run was still active, queues after it.
    finish, reservation = race_behind_the_counter(
        run_id,
        lambda: Api(runner.token).post(f"/v1/runs/{run_id}/finish"),
        lambda: reserve(Api(runner.token), run_id, "after-the-end", out=500),
    )

    assert finish.status_code == 200, finish.content
    assert reservation.status_code == 409, reservation.content
    assert reservation.json()["error"] == "run_finished"
    assert not BudgetReservation.objects.filter(run_id=run_id).exists()
    budget = RunBudget.objects.get(run_id=run_id)
    assert (budget.spent, budget.outstanding) == (0, 0)
    assert types_of(run_id) == ["run.created", "run.finished"]
    assert chain_verify(run_id) == []


@pytest.mark.slow
@pytest.mark.postgres
def test_reservations_fired_with_the_finish_are_never_booked_after_it(web_server, operator):
    response = operator.post("/v1/runs", run_body(budget_tokens=100_000))
    assert response.status_code == 201, response.content
    run_id, token = response.json()["id"], response.json()["session_token"]
    headers = {"Authorization": f"Bearer {token}"}

    def request(client, index):
        if index == 0:
            return client.post(f"{web_server.url}/v1/runs/{run_id}/finish", headers=headers)
        return client.post(
            f"{web_server.url}/v1/runs/{run_id}/budget/reservations",
            json={
                "request_key": f"k-{index}",
                "max_output_tokens": 10,
                "input_tokens_upper_bound": 0,
            },
            headers=headers,
        )

    responses = fire_at_once(40, request)

    assert responses[0].status_code == 200, responses[0].content
    # Before the finish: booked (201); after it: a void token (401) or, past the token
    # check already, a 409 run_finished. Never a 500, and nothing booked after the end.
    assert {r.status_code for r in responses[1:]} <= {201, 401, 409}
    booked = sum(r.status_code == 201 for r in responses[1:])
    types = types_of(run_id)
    assert types[-1] == "run.finished"
    assert types.count("budget.reserved") == booked
    assert BudgetReservation.objects.filter(run_id=run_id).count() == booked
    assert RunBudget.objects.get(run_id=run_id).outstanding == 10 * booked
    assert chain_verify(run_id) == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_approval_that_expires_while_its_decision_waits_is_never_granted(make_run, approver):
    run_id, runner = make_run()
    answer = ask(runner, run_id, "send_email", {"to": "bob@example.com"}, call_id="c-1")
    approval_id = answer["approval"]["id"]
    held = counter_held(run_id)
    decided: list = []

    def decide() -> None:
        try:
            decided.append(
                Api(user=approver).post(
                    f"/v1/approvals/{approval_id}/decision", {"decision": "approve"}
                )
            )
        finally:
            connection.close()

    thread = threading.Thread(target=decide)
    try:
        thread.start()
        # The approver clicked in time; the decision now waits for the run's counter.
        wait_until_waiting_on_locks(1, "the decision to queue for the counter")
        # Its expiry passes while it waits (the clock moved on): then the counter lets go.
        held.execute(
            f"UPDATE {Approval._meta.db_table} SET expires_at = now() - interval '1 second' "
            "WHERE id = %s",
            [approval_id],
        )
        held.commit()
    finally:
        held.close()
    thread.join()

    (response,) = decided
    assert response.status_code == 409, response.content
    assert response.json()["error"] == "expired"
    approval = Approval.objects.get(pk=approval_id)
    assert approval.status == "timed_out"
    retry = ask(runner, run_id, "send_email", {"to": "bob@example.com"}, call_id="c-1")
    assert (retry["decision"], retry["reason"]) == ("deny", "approval timed out")
    outcomes = Event.objects.filter(run_id=run_id, type="approval.decided").values_list(
        "data__outcome", flat=True
    )
    assert list(outcomes) == ["timed_out"]
    assert chain_verify(run_id) == []
