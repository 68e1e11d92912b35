"""Review wave 56c: the budget and the run lifecycle, from the runner's and the operator's side.

- A settle that passed its token check while the run was active, and reached the budget after
  the run's finish committed, was recorded: `budget.settled` after `run.finished` (the chain
  check names it as an event that may not follow the finish) and spend moved on a finished
  run. The README: "Nothing else can be asked, reserved, settled, approved or claimed for a
  finished run". It is now a 409 `run_finished` that records nothing, as a reservation is.
- `POST /v1/runs` ignored fields it does not know: a misspelt `"trust-tier": "read_only"`
  (meant to lower the tier) created a `trusted` run. Unknown fields are now a 400.
- `POST /v1/runs` took control and format characters (an ANSI escape, a newline, a bidi
  override) in the agent's name and the source's repositories, which approvers and auditors
  read. They are now a 400.
- A retry of a reservation with the same request_key answered the budget's remaining tokens
  as they are now, not the body of the first answer (SPEC 5: "a retry with the same key: 200,
  same body").
"""

from unittest import mock

import pytest

from governance.models import BudgetReservation, Run, RunBudget, UsageEntry
from ledger.chain_checks import chain_verify
from ledger.models import Event
from tests.conftest import Api, run_body


def reserve(runner, run_id, key, out=100):
    return runner.post(
        f"/v1/runs/{run_id}/budget/reservations",
        {"request_key": key, "max_output_tokens": out, "input_tokens_upper_bound": 0},
    )


def settle(runner, run_id, rid):
    return runner.post(
        f"/v1/runs/{run_id}/budget/reservations/{rid}/settle",
        {"input_tokens": 30, "output_tokens": 20, "cost_usd": "0.01"},
    )


def types_of(run_id) -> list[str]:
    return list(Event.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True))


# --- a settle that races the run's finish -------------------------------------------------


@pytest.mark.django_db
def test_a_settle_past_its_token_check_when_the_run_finishes_records_nothing(make_run):
    # Proves: a settle whose token check passed while the run was active, and whose run then
    # finished (another request of the same token, or the operator) before the settle reached
    # the budget, is refused (409 run_finished) and writes nothing after `run.finished`.
    # Before the fix: 200, a usage row, spent += 50, and `budget.settled` after `run.finished`.
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "turn-1").json()["id"]

    from governance.api import budget as budget_api
    from governance.services.runs import run_finish

    real_runner_run = budget_api.runner_run

    def finished_after_the_token_check(run_id_, actor):
        run = real_runner_run(run_id_, actor)
        # The finish commits here, between this request's token check and its settlement.
        run_finish(run=Run.objects.get(pk=run.pk), actor_label="operator")
        return run

    with mock.patch.object(budget_api, "runner_run", finished_after_the_token_check):
        response = settle(runner, run_id, rid)

    assert response.status_code == 409, response.content
    assert response.json()["error"] == "run_finished"
    assert types_of(run_id) == ["run.created", "budget.reserved", "run.finished"]
    assert not UsageEntry.objects.filter(run_id=run_id).exists()
    assert RunBudget.objects.get(run_id=run_id).spent == 0
    assert chain_verify(run_id) == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_settle_queued_behind_its_runs_finish_is_refused_and_settles_nothing(make_run):
    # Proves the same with real concurrency on PostgreSQL: the finish queues for the run's
    # counter first, the settle (its token checked while the run was active) after it.
    from tests.concurrency.test_settlement_lock_order import race_behind_the_counter

    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "turn-1").json()["id"]
    finish, settled = race_behind_the_counter(
        run_id,
        lambda: Api(runner.token).post(f"/v1/runs/{run_id}/finish"),
        lambda: settle(Api(runner.token), run_id, rid),
    )

    assert finish.status_code == 200, finish.content
    assert settled.status_code == 409, settled.content
    assert settled.json()["error"] == "run_finished"
    assert types_of(run_id) == ["run.created", "budget.reserved", "run.finished"]
    assert not UsageEntry.objects.filter(run_id=run_id).exists()
    assert chain_verify(run_id) == []


# --- creating a run: unknown fields, control characters -----------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "extra",
    [
        {"trust-tier": "read_only"},  # meant to lower the tier: was a trusted run
        {"trustTier": "read_only"},
        {"budget": 10},  # budget_tokens was meant: the run got budget_tokens' value
        {"connection": ["jira"]},
    ],
    ids=["trust-tier", "trustTier", "budget", "connection"],
)
def test_an_unknown_field_in_a_run_is_a_400_and_creates_nothing(operator, extra):
    # Proves: POST /v1/runs refuses a field it does not know (a typo of a field that lowers
    # the trust tier would otherwise create a run more trusted than asked), naming the field.
    response = operator.post("/v1/runs", run_body(**extra))
    assert response.status_code == 400, response.content
    assert next(iter(extra)) in response.json()["detail"]
    assert not Run.objects.exists()


@pytest.mark.django_db
def test_an_unknown_field_in_the_source_is_a_400(operator):
    body = run_body(
        source={
            "kind": "pull_request",
            "repository": "acme/app",
            "head_repository": "acme/app",
            "head_sha": "abc",
        }
    )
    response = operator.post("/v1/runs", body)
    assert response.status_code == 400, response.content
    assert "head_sha" in response.json()["detail"]
    assert not Run.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "override",
    [
        {"agent": "triage-bot\x1b[32m approved"},  # an ANSI escape in what approvers read
        {"agent": "triage-bot\nsecond line"},
        {"agent": "bot\u202etxt.exe"},  # a bidi override
        {"source": {"kind": "manual", "repository": "acme/app\r\nX-Injected: 1"}},
        {
            "source": {
                "kind": "pull_request",
                "repository": "acme/app",
                "head_repository": "acme/app\u200b",
            }
        },
    ],
    ids=["ansi", "newline", "bidi", "crlf-in-source", "zero-width-in-head"],
)
def test_control_or_format_characters_in_a_run_are_a_400(operator, override):
    # Proves: the agent's name and the source's repositories, shown to approvers and auditors
    # and recorded in `run.created`, refuse control and format characters with a 400.
    response = operator.post("/v1/runs", run_body(**override))
    assert response.status_code == 400, response.content
    assert not Run.objects.exists()


@pytest.mark.django_db
def test_plain_names_still_create_runs(operator):
    body = run_body(
        agent="Триаж-бот 2",
        source={"kind": "pull_request", "repository": "acme/app", "head_repository": "acme/app"},
    )
    response = operator.post("/v1/runs", body)
    assert response.status_code == 201, response.content
    assert response.json()["trust_tier"] == "trusted"


# --- a reservation's retry answers the same body ------------------------------------------


@pytest.mark.django_db
def test_a_reservation_retry_answers_the_same_body_as_the_first_answer(make_run):
    # Proves SPEC 5 "a retry with the same key: 200, same body": the retry of a reservation
    # whose first answer was lost answers the remaining tokens that answer gave (and that the
    # ledger's budget.reserved records), not the remaining after later reservations.
    run_id, runner = make_run(budget_tokens=1000)
    first = reserve(runner, run_id, "turn-1", out=100)
    assert first.status_code == 201
    assert reserve(runner, run_id, "turn-2", out=300).status_code == 201
    again = reserve(runner, run_id, "turn-1", out=100)
    assert again.status_code == 200
    assert again.json() == first.json()
    reserved = Event.objects.get(run_id=run_id, type="budget.reserved", seq=2).data
    assert reserved["remaining_tokens"] == again.json()["remaining_tokens"] == 900
    assert BudgetReservation.objects.filter(run_id=run_id).count() == 2
