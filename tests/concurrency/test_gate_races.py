"""Real simultaneous HTTP requests against two gunicorn processes sharing one database
(PostgreSQL, or SQLite in a file)."""

import pytest

from governance.models import BudgetReservation, RunBudget, ToolCall
from ledger.chain_checks import chain_verify
from ledger.models import Event
from tests.concurrency.conftest import fire_at_once

pytestmark = [pytest.mark.slow]

ALLOWANCE = 16_000
SLICE = 1_000  # 64 requests of 1,000 tokens race for 4x the allowance


def race_reservations(server, run_id, token):
    def request(client, index):
        return client.post(
            f"{server.url}/v1/runs/{run_id}/budget/reservations",
            json={
                "request_key": f"k-{index}",
                "max_output_tokens": SLICE,
                "input_tokens_upper_bound": 0,
            },
            headers={"Authorization": f"Bearer {token}"},
        )

    return fire_at_once(64, request)


def create_run(operator, **overrides):
    from tests.conftest import run_body

    response = operator.post("/v1/runs", run_body(budget_tokens=ALLOWANCE, **overrides))
    assert response.status_code == 201
    return response.json()["id"], response.json()["session_token"]


def test_64_reservations_racing_for_4x_the_allowance_book_exactly_the_allowance(
    web_server, operator
):
    run_id, token = create_run(operator)
    responses = race_reservations(web_server, run_id, token)
    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(201) == ALLOWANCE // SLICE
    assert statuses.count(409) == 64 - ALLOWANCE // SLICE
    budget = RunBudget.objects.get(run_id=run_id)
    held = sum(
        BudgetReservation.objects.filter(run_id=run_id).values_list("reserved_tokens", flat=True)
    )
    assert budget.outstanding == held == ALLOWANCE
    assert budget.spent + budget.outstanding <= budget.allowance
    assert chain_verify(run_id) == []


@pytest.mark.postgres  # on SQLite the whole database is the lock (see the SQLite control)
def test_control_without_the_row_lock_the_same_race_overbooks(unlocked_web_server, operator):
    # Proves the test above can fail: with the lock switched off, concurrent requests all
    # read the same remaining budget and more reservations pass than fit.
    overbooked = False
    for _ in range(5):
        run_id, token = create_run(operator)
        responses = race_reservations(unlocked_web_server, run_id, token)
        granted = sum(1 for r in responses if r.status_code == 201)
        if granted > ALLOWANCE // SLICE:
            overbooked = True
            break
    assert overbooked, "the unlocked control never overbooked: the race test proves nothing"


def test_50_identical_gate_requests_at_once_make_one_record_and_one_decision(web_server, operator):
    run_id, token = create_run(operator)

    def request(client, index):
        return client.post(
            f"{web_server.url}/v1/runs/{run_id}/permission",
            json={
                "session_id": "s-1",
                "tool_call_id": "c-1",
                "tool": "run_command",
                "arguments": {"command": "git status"},
            },
            headers={"Authorization": f"Bearer {token}"},
        )

    responses = fire_at_once(50, request)
    assert {r.status_code for r in responses} == {200}
    assert {r.json()["decision"] for r in responses} == {"allow"}
    assert ToolCall.objects.filter(run_id=run_id).count() == 1
    assert Event.objects.filter(run_id=run_id, type="tool.decision").count() == 1
    assert Event.objects.filter(run_id=run_id, type="tool.requested").count() == 1
    assert chain_verify(run_id) == []
