"""Budget reservations: request-keyed, exact at the edge, idempotent settle."""

import pytest

from governance.models import RunBudget
from governance.services.budget import reservations_release_expired
from ledger.models import Event


def reserve(runner, run_id, key, out=100, inp=0):
    return runner.post(
        f"/v1/runs/{run_id}/budget/reservations",
        {"request_key": key, "max_output_tokens": out, "input_tokens_upper_bound": inp},
    )


@pytest.mark.django_db
def test_a_reservation_books_output_plus_input_bound(make_run):
    run_id, runner = make_run(budget_tokens=20000)
    response = reserve(runner, run_id, "r-1", out=4096, inp=12000)
    assert response.status_code == 201
    body = response.json()
    assert body["reserved_tokens"] == 16096
    assert body["remaining_tokens"] == 20000 - 16096
    assert Event.objects.filter(run_id=run_id, type="budget.reserved").count() == 1


@pytest.mark.django_db
def test_a_retry_with_the_same_key_returns_the_same_reservation_with_200(make_run):
    run_id, runner = make_run(budget_tokens=1000)
    first = reserve(runner, run_id, "r-1")
    second = reserve(runner, run_id, "r-1")
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"]
    assert RunBudget.objects.get(run_id=run_id).outstanding == 100


@pytest.mark.django_db
def test_a_reservation_that_exactly_fills_the_allowance_fits_and_the_next_is_refused(make_run):
    run_id, runner = make_run(budget_tokens=300)
    assert reserve(runner, run_id, "a", out=200).status_code == 201
    assert reserve(runner, run_id, "b", out=100).status_code == 201
    refused = reserve(runner, run_id, "c", out=1)
    assert refused.status_code == 409
    assert refused.json() == {
        "error": "budget_exhausted",
        "detail": refused.json()["detail"],
        "remaining_tokens": 0,
    }
    assert Event.objects.filter(run_id=run_id, type="budget.denied").count() == 1


@pytest.mark.django_db
def test_settle_is_idempotent_and_a_different_second_settle_is_409(make_run):
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r", out=500).json()["id"]
    url = f"/v1/runs/{run_id}/budget/reservations/{rid}/settle"
    first = runner.post(url, {"input_tokens": 120, "output_tokens": 80, "cost_usd": "0.0123"})
    again = runner.post(url, {"input_tokens": 120, "output_tokens": 80, "cost_usd": "0.0123"})
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.json()["replayed"] is True
    different = runner.post(url, {"input_tokens": 999, "output_tokens": 80})
    assert different.status_code == 409
    budget = RunBudget.objects.get(run_id=run_id)
    assert (budget.spent, budget.outstanding) == (200, 0)
    assert Event.objects.filter(run_id=run_id, type="budget.settled").count() == 1


@pytest.mark.django_db
def test_the_ledger_shows_the_budget_figures_an_auditor_reads(make_run):
    """Found by a newcomer: every `*_tokens` figure read `[redacted]` in the events, since
    `token` is a secret word. Counts are kept; a string under such a key is still masked."""
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r", out=500, inp=100).json()["id"]
    runner.post(
        f"/v1/runs/{run_id}/budget/reservations/{rid}/settle",
        {"input_tokens": 120, "output_tokens": 80},
    )
    reserve(runner, run_id, "too-much", out=5000)
    events = runner.get(f"/v1/runs/{run_id}/events").json()["events"]
    data = {event["type"]: event["data"] for event in events}
    assert data["run.created"]["budget_tokens"] == 1000
    reserved = data["budget.reserved"]
    assert (reserved["reserved_tokens"], reserved["remaining_tokens"]) == (600, 400)
    settled = data["budget.settled"]
    assert (settled["input_tokens"], settled["output_tokens"]) == (120, 80)
    assert settled["reserved_tokens"] == 600
    assert data["budget.denied"]["requested_tokens"] == 5000


def test_a_string_under_a_token_count_key_is_still_masked():
    from ledger.redaction import MASK, redact

    masked = redact({"input_tokens": "sk-live-canary-1234", "api_token": 12345}).data
    assert masked == {"input_tokens": MASK, "api_token": MASK}


@pytest.mark.django_db
def test_the_gate_denies_with_budget_once_spent_plus_outstanding_reaches_the_allowance(make_run):
    from tests.governance.gate.test_pipeline import ask

    run_id, runner = make_run(budget_tokens=100)
    assert reserve(runner, run_id, "all", out=100).status_code == 201
    answer = ask(runner, run_id, "read_file", {"path": "/workspace/a"})
    assert (answer["decision"], answer["source"]) == ("deny", "budget")


@pytest.mark.django_db
def test_expired_reservations_are_released_and_a_late_settle_still_counts(make_run):
    from django.utils import timezone

    from governance.models import BudgetReservation

    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r", out=600).json()["id"]
    BudgetReservation.objects.filter(pk=rid).update(expires_at=timezone.now())
    assert reservations_release_expired() == 1
    assert RunBudget.objects.get(run_id=run_id).outstanding == 0
    late = runner.post(
        f"/v1/runs/{run_id}/budget/reservations/{rid}/settle",
        {"input_tokens": 10, "output_tokens": 5},
    )
    assert late.status_code == 200
    budget = RunBudget.objects.get(run_id=run_id)
    assert (budget.spent, budget.outstanding) == (15, 0)


@pytest.mark.django_db
def test_settling_another_runs_reservation_is_404(make_run):
    run_a, runner_a = make_run()
    run_b, runner_b = make_run()
    rid = reserve(runner_a, run_a, "r").json()["id"]
    response = runner_b.post(
        f"/v1/runs/{run_b}/budget/reservations/{rid}/settle",
        {"input_tokens": 1, "output_tokens": 1},
    )
    assert response.status_code == 404
