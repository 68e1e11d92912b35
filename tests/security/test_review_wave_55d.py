"""Review wave 55d: the REST API's input handling, from a runner holding its session token.

What a runner sends for money and for ids in the address is read the way the README shows it
("cost_usd": "0.0123", the reservation `id` the reserve call answered), not the way Python's
`Decimal()` and `int()` happen to be lenient: those also read `"1_000"` as 1000, Arabic-Indic
or full-width digits as ASCII ones, and a signed zero `"-0"` as a cost. Each such request is
a 4xx that changes nothing (no usage row, no spent tokens, no ledger event)."""

import pytest

from governance.models import BudgetReservation, RunBudget, UsageEntry
from ledger.models import Event

pytestmark = pytest.mark.django_db


def reserve(runner, run_id, key):
    response = runner.post(
        f"/v1/runs/{run_id}/budget/reservations",
        {"request_key": key, "max_output_tokens": 100, "input_tokens_upper_bound": 0},
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def settle(runner, run_id, rid, **extra):
    return runner.post(
        f"/v1/runs/{run_id}/budget/reservations/{rid}/settle",
        {"input_tokens": 3, "output_tokens": 4, **extra},
    )


def snapshot(run_id):
    budget = RunBudget.objects.get(run_id=run_id)
    return (
        budget.spent,
        budget.outstanding,
        list(BudgetReservation.objects.filter(run_id=run_id).values_list("pk", "status")),
        UsageEntry.objects.filter(run_id=run_id).count(),
        Event.objects.filter(run_id=run_id).count(),
    )


@pytest.mark.parametrize(
    "cost",
    [
        "-0",  # a signed zero: was recorded, and written to the ledger, as "-0.000000"
        "-0.000",
        "1_000",  # PEP 515 digit grouping: was settled as a cost of 1000.000000
        "0_0.5",
        "\u0661",  # ARABIC-INDIC DIGIT ONE: was settled as 1.000000
        "\uff11.5",  # FULLWIDTH DIGIT ONE
        "+1",
    ],
)
def test_a_cost_that_is_not_a_plain_decimal_is_a_400_and_settles_nothing(make_run, cost):
    """FINDING (low): `UsdAmountField` is DRF's DecimalField, which hands the string to
    `decimal.Decimal`: underscores, non-ASCII digits and a minus sign on zero were accepted
    (200) and the ledger's `budget.settled` recorded a cost the runner never wrote (`"1_000"`
    became `"1000.000000"`) or a negative one (`"-0.000000"`). A runner's malformed amount
    is a mistake to refuse, like `"5"` for a token count; the settle stays open for the
    real amount."""
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r")
    before = snapshot(run_id)

    response = settle(runner, run_id, rid, cost_usd=cost)

    assert response.status_code == 400, (response.status_code, response.content)
    assert response.json()["error"] == "invalid"
    assert snapshot(run_id) == before
    # The real amount still settles it.
    assert settle(runner, run_id, rid, cost_usd="0.0123").json()["cost_usd"] == "0.012300"


@pytest.mark.parametrize("cost", ["0", "0.0123", "12.5", "5E-1", "1e2", " 0.5 "])
def test_plain_decimal_costs_still_settle(make_run, cost):
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r")
    response = settle(runner, run_id, rid, cost_usd=cost)
    assert response.status_code == 200, response.content
    assert not response.json()["cost_usd"].startswith("-")


@pytest.mark.parametrize(
    "spelling",
    [
        lambda rid: "".join(chr(0x660 + int(d)) for d in rid),  # ARABIC-INDIC DIGITs
        lambda rid: "".join(chr(0xFF10 + int(d)) for d in rid),  # FULLWIDTH DIGITs
        lambda rid: f"+{rid}",
        lambda rid: f"0{rid}",
        lambda rid: f"0_{rid}",
    ],
    ids=["arabic-indic", "fullwidth", "plus", "leading-zero", "underscore"],
)
def test_a_reservation_id_is_only_the_id_the_reserve_call_answered(make_run, spelling):
    """FINDING (low): the settle path's reservation id went through `int()`, so `١`, `１`,
    `+1`, `01` and `0_1` all named reservation 1 and settled it (200, a usage row and a
    `budget.settled` event). Every other spelling of an id is a 404 (`1.0`, `-1`: see
    test_review_wave_54j); these are too, and the reservation stays held."""
    run_id, runner = make_run(budget_tokens=1000)
    rid = reserve(runner, run_id, "r")
    alias = spelling(rid)
    assert alias != rid and int(alias) == int(rid)  # another spelling of the same id
    before = snapshot(run_id)

    response = settle(runner, run_id, alias)

    assert response.status_code == 404, (response.status_code, response.content)
    assert response.json()["error"] == "not_found"
    assert snapshot(run_id) == before
    assert settle(runner, run_id, rid).status_code == 200


@pytest.mark.parametrize("prefix", ["0", "+", "0_"])
def test_a_connection_id_is_only_the_id_fluidbox_answered(
    broker_org, operator, echo_server, prefix
):
    """The same spellings of an id named a connection to read, refresh or revoke: every id in
    an address is read one way (`governance.object_ids`), and the others are a 404."""
    from urllib.parse import quote

    from tests.governance.broker.support import connect

    connection_id = str(connect(operator, echo_server))
    assert operator.get(f"/v1/connections/{connection_id}").status_code == 200
    fullwidth = "".join(chr(0xFF10 + int(d)) for d in connection_id)
    for alias in (prefix + connection_id, fullwidth):
        response = operator.get(f"/v1/connections/{quote(alias)}")
        assert response.status_code == 404, (alias, response.content)
        assert response.json()["error"] == "not_found"
