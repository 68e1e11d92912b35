"""The gate's stage order is the security model: a call failing two stages is denied by
the earlier one, and the order itself is pinned."""

import pytest
from django.db import transaction

from governance.gate import pipeline
from governance.models import RunBudget, ToolCall
from ledger.models import Event


def ask(runner, run_id, tool, arguments, *, call_id="c-1", session="s-1", wait=0):
    response = runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": session,
            "tool_call_id": call_id,
            "tool": tool,
            "arguments": arguments,
            "wait_seconds": wait,
        },
    )
    assert response.status_code == 200, response.content
    return response.json()


def exhaust_budget(run_id):
    RunBudget.objects.filter(run_id=run_id).update(spent=10**9)


def test_the_stage_order_is_budget_frozen_set_schema_trust_tier_policy_approval():
    names = [stage.__name__ for stage in pipeline.STAGES]
    assert names == [
        "check_budget",
        "check_frozen_set",
        "check_schema",
        "check_trust_tier",
        "check_policy",
        "check_approval",
    ]


@pytest.mark.django_db
def test_budget_exhausted_and_unknown_tool_is_denied_by_budget(make_run):
    run_id, runner = make_run()
    exhaust_budget(run_id)
    answer = ask(runner, run_id, "no_such_tool", {})
    assert (answer["decision"], answer["source"]) == ("deny", "budget")
    assert answer["tool_error"]


@pytest.mark.django_db
def test_unknown_tool_with_bad_arguments_is_denied_by_capability(make_run):
    run_id, runner = make_run()
    answer = ask(runner, run_id, "no_such_tool", {"x": 1})
    assert (answer["decision"], answer["source"]) == ("deny", "capability")


@pytest.mark.django_db
def test_bad_arguments_on_a_write_tool_in_a_read_only_run_is_denied_by_schema(make_run):
    run_id, runner = make_run(trust_tier="read_only")
    answer = ask(runner, run_id, "write_file", {"path": "/workspace/a"})
    assert (answer["decision"], answer["source"]) == ("deny", "schema")
    assert "content" in answer["reason"]


@pytest.mark.django_db
def test_read_only_and_policy_never_is_denied_by_trust_tier(make_run):
    run_id, runner = make_run(trust_tier="read_only")
    answer = ask(runner, run_id, "run_command", {"command": "rm -rf /"})
    assert (answer["decision"], answer["source"]) == ("deny", "trust_tier")


@pytest.mark.django_db
def test_policy_never_beats_approval(make_run):
    run_id, runner = make_run()
    answer = ask(runner, run_id, "write_file", {"path": "/etc/passwd", "content": "x"})
    assert (answer["decision"], answer["source"]) == ("deny", "policy")
    assert answer["rule"]["pattern"] == "write_file:*"
    assert answer["approval"] is None


@pytest.mark.django_db
def test_policy_always_allows(make_run):
    run_id, runner = make_run()
    answer = ask(runner, run_id, "run_command", {"command": "git status"})
    assert (answer["decision"], answer["source"]) == ("allow", "policy")
    assert answer["tool_error"] is None


@pytest.mark.django_db
def test_ask_in_a_supervised_run_pauses_with_an_approval(make_run):
    run_id, runner = make_run()
    answer = ask(runner, run_id, "send_email", {"to": "x@example.com"})
    assert answer["decision"] == "pending"
    assert answer["source"] == "approval"
    assert answer["approval"]["status"] == "pending"
    types = list(Event.objects.filter(run_id=run_id).values_list("type", flat=True))
    assert types == ["run.created", "tool.requested", "approval.requested"]


@pytest.mark.django_db
def test_a_read_only_run_is_denied_a_write_tool_even_when_policy_allows_and_autonomy_allows(
    operator, make_run
):
    run_id, runner = make_run(
        autonomy="autonomous",
        source={"kind": "pull_request", "repository": "acme/app", "head_repository": "mallory/app"},
    )
    assert operator.get(f"/v1/runs/{run_id}").json()["trust_tier"] == "read_only"
    answer = ask(runner, run_id, "write_file", {"path": "/workspace/a.txt", "content": "x"})
    assert (answer["decision"], answer["source"]) == ("deny", "trust_tier")


@pytest.mark.django_db
def test_autonomous_runs_rewrite_ask_to_the_fallback_and_record_both_verdicts(make_run):
    run_id, runner = make_run(autonomy="autonomous")
    answer = ask(runner, run_id, "send_email", {"to": "x@example.com"})
    assert (answer["decision"], answer["source"]) == ("deny", "approval")
    assert answer["original_verdict"] == "require_approval"
    decision = Event.objects.get(run_id=run_id, type="tool.decision")
    assert decision.data["original_verdict"] == "require_approval"
    assert decision.data["verdict"] == "deny"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("source", "tier"),
    [
        (
            {"kind": "pull_request", "repository": "acme/app", "head_repository": "acme/app"},
            "trusted",
        ),
        (
            {"kind": "pull_request", "repository": "acme/app", "head_repository": "mallory/app"},
            "read_only",
        ),
        ({"kind": "pull_request", "repository": "acme/app", "head_repository": None}, "read_only"),
        ({"kind": "pull_request", "repository": "acme/app"}, "read_only"),
        ({"kind": "manual"}, "trusted"),
        ({"kind": "schedule"}, "trusted"),
    ],
)
def test_trust_tier_is_read_only_for_forks_and_unknown_forkness(operator, make_run, source, tier):
    run_id, _ = make_run(source=source)
    assert operator.get(f"/v1/runs/{run_id}").json()["trust_tier"] == tier


@pytest.mark.django_db
def test_a_trust_tier_may_be_lowered_but_never_raised(operator):
    from tests.conftest import run_body

    fork = {"kind": "pull_request", "repository": "a/b", "head_repository": "evil/b"}
    response = operator.post("/v1/runs", run_body(source=fork, trust_tier="trusted"))
    assert response.status_code == 201
    assert response.json()["trust_tier"] == "read_only"


@pytest.mark.django_db
def test_a_retry_returns_the_settled_decision_without_new_events(make_run):
    run_id, runner = make_run()
    first = ask(runner, run_id, "run_command", {"command": "git status"})
    before = Event.objects.filter(run_id=run_id).count()
    second = ask(runner, run_id, "run_command", {"command": "git status"})
    assert first == second
    assert Event.objects.filter(run_id=run_id).count() == before
    assert ToolCall.objects.filter(run_id=run_id).count() == 1


@pytest.mark.django_db
def test_the_same_ids_with_different_arguments_is_a_409(make_run):
    run_id, runner = make_run()
    ask(runner, run_id, "run_command", {"command": "git status"})
    response = runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": "s-1",
            "tool_call_id": "c-1",
            "tool": "run_command",
            "arguments": {"command": "rm -rf /"},
        },
    )
    assert response.status_code == 409
    assert response.json()["error"] == "tool_call_id_reused"


@pytest.mark.django_db
def test_ledger_records_requested_then_decision_with_digest_not_arguments(make_run):
    run_id, runner = make_run()
    secret_looking = "s3cr3t-value-in-an-argument-" + "x" * 400
    ask(runner, run_id, "write_file", {"path": "/workspace/a", "content": secret_looking})
    events = list(Event.objects.filter(run_id=run_id).order_by("seq"))
    assert [e.type for e in events] == ["run.created", "tool.requested", "tool.decision"]
    requested = events[1].data
    assert len(requested["arguments_digest"]) == 64
    assert secret_looking not in str(requested)
    decision = events[2].data
    assert decision["decision"] == "allow"
    assert decision["tool_call_id"] == "c-1"
    assert decision["rule"]["pattern"] == "write_file:/workspace/*"


@pytest.mark.django_db
def test_path_traversal_does_not_match_the_workspace_rule(make_run):
    run_id, runner = make_run()
    answer = ask(runner, run_id, "write_file", {"path": "/workspace/../etc/passwd", "content": ""})
    assert (answer["decision"], answer["source"]) == ("deny", "policy")


@pytest.mark.django_db
def test_a_compound_command_cannot_ride_on_an_allowed_prefix(make_run):
    run_id, runner = make_run()
    answer = ask(runner, run_id, "run_command", {"command": "ls -la; rm -rf /"})
    assert (answer["decision"], answer["source"]) == ("deny", "policy")


@pytest.mark.django_db
def test_a_budget_denial_is_recorded_as_a_decision(make_run):
    run_id, runner = make_run(budget_tokens=0)
    answer = ask(runner, run_id, "read_file", {"path": "/workspace/a"})
    assert answer["source"] == "budget"
    with transaction.atomic():
        assert Event.objects.filter(run_id=run_id, type="tool.decision").count() == 1
