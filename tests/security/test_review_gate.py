"""The gate's schema stage and the budget, attacked by the agent that holds the run token:
arguments chosen to stall a worker in the validator, to slip past a schema `pattern` read
with Python's meaning instead of ECMA-262's, and a reservation of nothing once the budget is
spent."""

import json
import time

import pytest

from governance.models import BudgetReservation, ToolCall
from governance.services.bundles import bundle_import
from ledger.models import Event
from tests.governance.gate.test_pipeline import ask

REVIEW_BUNDLE = {
    "name": "review",
    "tools": [
        {
            # `^(a+)+$` is instant for the `regex` module but backtracks for hours in `re`,
            # which jsonschema's unevaluatedProperties called directly.
            "name": "labels",
            "access": "read",
            "schema": {
                "type": "object",
                "patternProperties": {"^(a+)+$": {"type": "integer"}},
                "unevaluatedProperties": False,
            },
        },
        {
            "name": "tag",
            "access": "read",
            "schema": {
                "type": "object",
                "properties": {"tags": {"type": "array", "uniqueItems": True}},
            },
        },
        {
            "name": "checkout",
            "access": "read",
            "schema": {
                "type": "object",
                "properties": {
                    "branch": {"type": "string", "pattern": "^[A-Za-z0-9._/-]+$"},
                    "port": {"type": "string", "pattern": "^\\d{1,5}$"},
                    "user": {"type": "string", "pattern": "^\\w+$"},
                },
                "additionalProperties": False,
            },
        },
        {
            # Each key costs this pattern tens of milliseconds, under the 50 ms cut-off.
            "name": "slow_keys",
            "access": "read",
            "schema": {"type": "object", "patternProperties": {"^(a|a)+$": {"type": "string"}}},
        },
    ],
}
POLICY_ALLOWS_ALL = """
name: default
autonomous_fallback: deny
rules:
  - pattern: "*"
    action: ALWAYS
"""


@pytest.fixture
def review_run(org, make_run):
    from governance.services.policies import policy_save

    policy_save(org=org, text=POLICY_ALLOWS_ALL, author=None)
    bundle_import(org=org, text=json.dumps(REVIEW_BUNDLE))
    return make_run(bundles=["review"])


def allowed(run_id) -> int:
    return ToolCall.objects.filter(run_id=run_id, decision="allow").count()


@pytest.mark.django_db
@pytest.mark.timeout(30)
def test_a_key_that_backtracks_for_hours_under_unevaluated_properties_is_denied_at_once(
    review_run,
):
    run_id, runner = review_run
    started = time.monotonic()
    answer = ask(runner, run_id, "labels", {"a" * 40 + "!": 1})
    assert time.monotonic() - started < 5
    assert (answer["decision"], answer["source"]) == ("deny", "schema")
    # The keyword still does its work: a key the pattern names passes, any other does not.
    ok = ask(runner, run_id, "labels", {"aaa": 1}, call_id="c-2")
    assert ok["decision"] == "allow"
    assert ask(runner, run_id, "labels", {"b": 1}, call_id="c-3")["decision"] == "deny"
    assert allowed(run_id) == 1


@pytest.mark.django_db
@pytest.mark.timeout(30)
def test_an_array_of_items_that_do_not_sort_is_checked_for_uniqueness_in_linear_time(
    review_run,
):
    run_id, runner = review_run
    # Mixed types do not sort: jsonschema compared the 35,000 items pairwise (minutes).
    tags = [{}] + list(range(1, 35_000))
    started = time.monotonic()
    answer = ask(runner, run_id, "tag", {"tags": tags})
    assert time.monotonic() - started < 5
    # Past the schema (the policy asks: a call key this long is over its bound).
    assert (answer["decision"], answer["source"]) == ("pending", "approval")
    # JSON Schema's equality: 1 and 1.0 are equal, true and 1 are not, keys in any order.
    repeated = ask(runner, run_id, "tag", {"tags": tags + [7.0]}, call_id="c-2")
    assert (repeated["decision"], repeated["source"]) == ("deny", "schema")
    objects = ask(
        runner, run_id, "tag", {"tags": [{"a": 1, "b": 2}, {"b": 2, "a": 1}]}, call_id="c-3"
    )
    assert objects["decision"] == "deny"
    assert ask(runner, run_id, "tag", {"tags": [True, 1]}, call_id="c-4")["decision"] == "allow"
    assert allowed(run_id) == 1


@pytest.mark.django_db
@pytest.mark.timeout(30)
def test_many_keys_each_just_under_the_pattern_cut_off_are_cut_off_together(review_run):
    run_id, runner = review_run
    keys = {"a" * 16 + f"!{i}": "x" for i in range(300)}  # ~9 s, one search at a time
    started = time.monotonic()
    answer = ask(runner, run_id, "slow_keys", keys)
    assert time.monotonic() - started < 5
    assert (answer["decision"], answer["source"]) == ("deny", "schema")
    assert "took too long" in answer["reason"]
    assert allowed(run_id) == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    "arguments",
    [
        {"branch": "main\n"},  # Python's `$` matches before a trailing newline; ECMA's does not
        {"port": "\u0661\u0662"},  # Arabic-Indic digits are Python's `\d`, not ECMA's
        {"port": "\uff18\uff10"},  # fullwidth digits
        {"user": "\u0430dmin"},  # a Cyrillic `а` is Python's `\w`, not ECMA's
    ],
)
def test_a_pattern_means_what_it_means_in_ecma_262(review_run, arguments):
    run_id, runner = review_run
    answer = ask(runner, run_id, "checkout", arguments)
    assert (answer["decision"], answer["source"]) == ("deny", "schema")
    assert allowed(run_id) == 0
    fine = ask(
        runner, run_id, "checkout", {"branch": "main", "port": "80", "user": "ada"}, call_id="c-2"
    )
    assert fine["decision"] == "allow"


@pytest.mark.django_db
def test_a_reservation_of_nothing_is_refused_even_when_the_budget_is_spent(make_run, operator):
    run_id, runner = make_run(budget_tokens=10)
    full = runner.post(
        f"/v1/runs/{run_id}/budget/reservations",
        {"request_key": "all", "max_output_tokens": 10, "input_tokens_upper_bound": 0},
    )
    assert full.status_code == 201
    events = Event.objects.filter(run_id=run_id).count()

    nothing = runner.post(
        f"/v1/runs/{run_id}/budget/reservations",
        {"request_key": "free", "max_output_tokens": 0, "input_tokens_upper_bound": 0},
    )

    assert nothing.status_code == 400, nothing.content
    assert nothing.json()["error"] == "invalid"
    assert list(
        BudgetReservation.objects.filter(run_id=run_id).values_list("request_key", flat=True)
    ) == ["all"]
    assert Event.objects.filter(run_id=run_id).count() == events
    budget = operator.get(f"/v1/runs/{run_id}").json()["budget"]
    assert (budget["reserved"], budget["remaining"]) == (10, 0)
