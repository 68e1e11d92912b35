"""Wave 54j: the budget and the run lifecycle attacked over HTTP, as the runner and as an
operator (probes; findings are the failing tests)."""

import pytest

from governance.models import Approval, BudgetReservation, RunBudget, UsageEntry
from ledger.models import Event
from tests.conftest import Api, run_body
from tests.governance.gate.test_pipeline import ask


def reserve(runner, run_id, key, out=100, inp=0):
    return runner.post(
        f"/v1/runs/{run_id}/budget/reservations",
        {"request_key": key, "max_output_tokens": out, "input_tokens_upper_bound": inp},
    )


def settle(runner, run_id, rid, inp=0, out=0, **extra):
    return runner.post(
        f"/v1/runs/{run_id}/budget/reservations/{rid}/settle",
        {"input_tokens": inp, "output_tokens": out, **extra},
    )


def snapshot(run_id):
    b = RunBudget.objects.get(run_id=run_id)
    return (
        b.spent,
        b.outstanding,
        BudgetReservation.objects.filter(run_id=run_id).count(),
        UsageEntry.objects.filter(run_id=run_id).count(),
        Event.objects.filter(run_id=run_id).count(),
    )


BAD_COUNTS = [-1, 0.0, 1.5, 2**63, 2**64, 10**30, "1e3", "5", True, False, None, [], {}, 1e30]


@pytest.mark.django_db
@pytest.mark.parametrize("value", BAD_COUNTS)
@pytest.mark.parametrize("field", ["max_output_tokens", "input_tokens_upper_bound"])
def test_bad_reservation_counts_are_a_4xx_and_change_nothing(make_run, field, value):
    run_id, runner = make_run(budget_tokens=1000)
    before = snapshot(run_id)
    body = {"request_key": "k", "max_output_tokens": 10, "input_tokens_upper_bound": 0}
    body[field] = value
    response = runner.post(f"/v1/runs/{run_id}/budget/reservations", body)
    assert response.status_code == 400, (response.status_code, response.content)
    assert snapshot(run_id) == before


@pytest.mark.django_db
@pytest.mark.parametrize("raw", [b"NaN", b"Infinity", b"-Infinity", b"1e400"])
def test_non_json_numbers_in_reservation_are_a_400(make_run, raw):
    run_id, runner = make_run(budget_tokens=1000)
    before = snapshot(run_id)
    body = b'{"request_key": "k", "max_output_tokens": ' + raw + b', "input_tokens_upper_bound": 0}'
    response = runner.client.post(
        f"/v1/runs/{run_id}/budget/reservations", body, content_type="application/json"
    )
    assert response.status_code == 400, (response.status_code, response.content)
    assert snapshot(run_id) == before


@pytest.mark.django_db
@pytest.mark.parametrize("value", BAD_COUNTS)
@pytest.mark.parametrize("field", ["input_tokens", "output_tokens"])
def test_bad_settle_counts_are_a_4xx_and_change_nothing(make_run, field, value):
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r").json()["id"]
    before = snapshot(run_id)
    body = {"input_tokens": 1, "output_tokens": 1}
    body[field] = value
    response = runner.post(f"/v1/runs/{run_id}/budget/reservations/{rid}/settle", body)
    assert response.status_code == 400, (response.status_code, response.content)
    assert snapshot(run_id) == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    "cost",
    [-1, "-0.01", "NaN", "Infinity", "sNaN", "1e30", "0.0000001", 0.5, True, "abc", "", "  "],
)
def test_bad_cost_is_a_4xx_and_changes_nothing(make_run, cost):
    """FINDING (low): cost_usd "" (or blanks) was read as null by DRF's DecimalField
    (allow_null): the settle answered 200 and recorded "no cost" for a malformed amount,
    and a later replay with the real amount is then a 409 already_settled."""
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r").json()["id"]
    before = snapshot(run_id)
    response = settle(runner, run_id, rid, inp=1, out=1, cost_usd=cost)
    assert response.status_code == 400, (response.status_code, response.content)
    assert snapshot(run_id) == before


@pytest.mark.django_db
@pytest.mark.parametrize("rid", ["abc", "-1", "0", "99999999999999999999999", "1.0"])
def test_bad_reservation_ids_are_404(make_run, rid):
    run_id, runner = make_run(budget_tokens=1000)
    reserve(runner, run_id, "r")
    response = settle(runner, run_id, rid, inp=1, out=1)
    assert response.status_code == 404, (response.status_code, response.content)


@pytest.mark.django_db
def test_settle_over_the_reservation_counts_and_the_gate_then_denies(make_run):
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r", out=10).json()["id"]
    assert settle(runner, run_id, rid, inp=900, out=200).status_code == 200
    budget = RunBudget.objects.get(run_id=run_id)
    assert (budget.spent, budget.outstanding) == (1100, 0)
    assert reserve(runner, run_id, "r2", out=1).status_code == 409
    assert ask(runner, run_id, "read_file", {"path": "/workspace/a"})["source"] == "budget"


@pytest.mark.django_db
def test_settle_replays(make_run):
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r", out=500).json()["id"]
    assert settle(runner, run_id, rid, inp=10, out=10).status_code == 200
    # replay with a cost now: the first had none
    second = settle(runner, run_id, rid, inp=10, out=10, cost_usd="5.00")
    third = settle(runner, run_id, rid, inp=10, out=10, cost_usd=None)
    assert second.status_code == 409, second.content
    assert third.status_code == 200
    assert settle(runner, run_id, rid, inp=0, out=20).status_code == 409
    assert RunBudget.objects.get(run_id=run_id).spent == 20
    assert UsageEntry.objects.get().cost_usd is None


@pytest.mark.django_db
def test_replay_with_different_split_of_tokens_same_key_reserve(make_run):
    run_id, runner = make_run(budget_tokens=1000)
    first = reserve(runner, run_id, "r", out=100, inp=50)
    again = reserve(runner, run_id, "r", out=50, inp=100)  # same total
    assert first.status_code == 201
    # Same total, different split: is it the same reservation?
    assert again.status_code in (200, 409)
    assert RunBudget.objects.get(run_id=run_id).outstanding == 150


@pytest.mark.django_db
def test_finished_run_token_is_refused_everywhere(make_run, operator):
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r", out=500).json()["id"]
    assert runner.post(f"/v1/runs/{run_id}/finish").status_code == 200
    before = snapshot(run_id)
    assert reserve(runner, run_id, "r2").status_code == 401
    assert reserve(runner, run_id, "r").status_code == 401
    assert settle(runner, run_id, rid, inp=1, out=1).status_code == 401
    assert runner.post(f"/v1/runs/{run_id}/finish").status_code == 401
    assert (
        runner.post(
            f"/v1/runs/{run_id}/permission",
            {
                "session_id": "s",
                "tool_call_id": "c",
                "tool": "read_file",
                "arguments": {"path": "/workspace/a"},
            },
        ).status_code
        == 401
    )
    assert runner.get(f"/v1/runs/{run_id}/events").status_code == 401
    # operator finishing again: idempotent, no new event
    again = operator.post(f"/v1/runs/{run_id}/finish")
    assert again.status_code == 200, again.content
    assert snapshot(run_id) == before


@pytest.mark.django_db
def test_finish_closes_pending_approval_and_late_decision_cannot_allow(
    make_run, operator, approver
):
    run_id, runner = make_run(budget_tokens=1000)
    asked = runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": "s",
            "tool_call_id": "c",
            "tool": "send_email",
            "arguments": {"to": "x@example.com"},
        },
    )
    assert asked.json()["decision"] == "pending", asked.content
    approval_id = asked.json()["approval"]["id"]
    assert operator.post(f"/v1/runs/{run_id}/finish").status_code == 200
    decided = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve"}
    )
    # By contract (SPEC 4) a loser of the CAS gets the settled outcome: 200, won false.
    assert decided.status_code in (200, 404, 409), decided.content
    assert decided.status_code != 200 or decided.json()["won"] is False
    assert Approval.objects.get(pk=approval_id).status == "denied"


@pytest.mark.django_db
def test_runner_cannot_patch_or_extend_its_budget(make_run):
    run_id, runner = make_run(budget_tokens=1000)
    for method in ("patch", "put", "post"):
        for path in (f"/v1/runs/{run_id}", f"/v1/runs/{run_id}/budget"):
            response = getattr(runner.client, method)(path, {"budget_tokens": 10**9}, format="json")
            status = response.status_code
            assert status in (401, 403, 404, 405), (method, path, status)
    assert RunBudget.objects.get(run_id=run_id).allowance == 1000


@pytest.mark.django_db
def test_operator_cannot_patch_budget(make_run, operator):
    run_id, runner = make_run(budget_tokens=1000)
    for method in ("patch", "put"):
        response = getattr(operator.client, method)(
            f"/v1/runs/{run_id}", {"budget_tokens": 10**9}, format="json"
        )
        assert response.status_code in (403, 404, 405)
    assert RunBudget.objects.get(run_id=run_id).allowance == 1000


@pytest.mark.django_db
@pytest.mark.parametrize(
    "budget", [-1, 1.5, "100", True, None, 2**63, 10**13, float("inf") if False else 1e3]
)
def test_run_creation_bad_budget(operator, budget):
    response = operator.post("/v1/runs", run_body(budget_tokens=budget))
    assert response.status_code == 400, (budget, response.status_code, response.content)


@pytest.mark.django_db
def test_run_creation_missing_budget(operator):
    body = run_body()
    del body["budget_tokens"]
    response = operator.post("/v1/runs", body)
    assert response.status_code == 400, response.content


@pytest.mark.django_db
def test_run_with_zero_budget_denies_everything(make_run):
    run_id, runner = make_run(budget_tokens=0)
    assert reserve(runner, run_id, "r", out=1).status_code == 409
    assert ask(runner, run_id, "read_file", {"path": "/workspace/a"})["source"] == "budget"


@pytest.mark.django_db
def test_run_creation_with_another_orgs_names(operator, other_org):
    from governance.services.bundles import bundle_import

    bundle_import(
        org=other_org,
        text=(
            "name: globex-only\ntools:\n  - name: globex_tool\n    access: read\n"
            "    secrets: false\n    schema: {type: object}\n"
        ),
    )
    response = operator.post("/v1/runs", run_body(bundles=["globex-only"]))
    assert response.status_code == 400, response.content
    response = operator.post("/v1/runs", run_body(policy="nope"))
    assert response.status_code == 400


@pytest.mark.django_db
def test_settle_another_runs_reservation_same_org(make_run):
    run_a, runner_a = make_run(budget_tokens=1000)
    run_b, runner_b = make_run(budget_tokens=1000)
    rid_b = reserve(runner_b, run_b, "r", out=500).json()["id"]
    # a's token against b's url
    assert settle(runner_a, run_b, rid_b, inp=1, out=1).status_code in (403, 404)
    # a's url with b's reservation
    assert settle(runner_a, run_a, rid_b, inp=1, out=1).status_code == 404
    assert RunBudget.objects.get(run_id=run_b).outstanding == 500
    assert not UsageEntry.objects.exists()


@pytest.mark.django_db
def test_other_org_operator_cannot_finish_or_read(make_run, other_operator):
    run_id, runner = make_run(budget_tokens=1000)
    assert other_operator.post(f"/v1/runs/{run_id}/finish").status_code == 404
    assert other_operator.get(f"/v1/runs/{run_id}").status_code == 404
    assert other_operator.post(f"/v1/runs/{run_id}/budget/reservations", {}).status_code in (403,)


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["\\ud800", "\\u0000", "a\\udfff", "x" * 201, ""])
def test_odd_request_keys_are_a_4xx_never_a_500(make_run, key):
    run_id, runner = make_run(budget_tokens=1000)
    before = snapshot(run_id)
    body = (
        '{"request_key": "' + key + '", "max_output_tokens": 1, "input_tokens_upper_bound": 0}'
    ).encode()
    response = runner.client.post(
        f"/v1/runs/{run_id}/budget/reservations", body, content_type="application/json"
    )
    assert response.status_code == 400, (response.status_code, response.content)
    assert snapshot(run_id) == before


def _call(runner, run_id, tool, arguments, call_id="c"):
    return runner.post(
        f"/v1/runs/{run_id}/permission",
        {"session_id": "s", "tool_call_id": call_id, "tool": tool, "arguments": arguments},
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "tool,arguments",
    [
        ("no_such_tool", {}),
        ("read_file", {"bogus": 1}),
        ("run_command", {"command": "rm -rf /"}),
        ("send_email", {"to": "x@example.com"}),
    ],
)
def test_budget_is_the_first_stage(make_run, tool, arguments):
    run_id, runner = make_run(budget_tokens=0)
    answer = _call(runner, run_id, tool, arguments)
    assert answer.status_code == 200, answer.content
    assert answer.json()["source"] == "budget", answer.json()


@pytest.mark.django_db
def test_budget_first_on_read_only_run(make_run):
    run_id, runner = make_run(budget_tokens=0, source={"kind": "pull_request", "repository": "a/b"})
    answer = _call(runner, run_id, "run_command", {"command": "git status"})
    assert answer.json()["source"] == "budget", answer.json()
