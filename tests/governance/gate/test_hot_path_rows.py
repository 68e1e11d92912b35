"""The decision's rows are written with prebuilt statements (`fluidbox.prebuilt_sql`), the
runner's run is read with one (`governance.run_sessions`), and a retry is caught by the unique
index rather than looked up first. What the ORM reads back must be what was asked."""

from datetime import timedelta

import pytest
from django.utils import timezone

from governance import policy_store
from governance.models import Policy, PolicyVersion, Run, RunBudget, ToolCall
from ledger.chain_checks import chain_verify
from ledger.models import Event, RunCounter
from tests.governance.gate.test_pipeline import ask, exhaust_budget

ODD_ARGUMENTS = {
    "path": '/workspace/naïve-数据 "quoted" \\ back\'slash.txt',
    "content": "line one\nline two\t\u2028 and an emoji 🚀",
}
NESTED_ARGUMENTS = {  # refused by the schema, but recorded as asked
    **ODD_ARGUMENTS,
    "nested": [1, 2.5, None, True, {"deep": ["x", {"deeper": -(2**53)}]}],
    "empty": {},
}


@pytest.mark.django_db
def test_a_decision_writes_rows_the_orm_reads_back_exactly(make_run):
    run_id, runner = make_run()
    before = timezone.now()
    answer = ask(runner, run_id, "write_file", ODD_ARGUMENTS, call_id="odd-1")
    assert answer["decision"] == "allow"

    call = ToolCall.objects.get(run_id=run_id, session_id="s-1", tool_call_id="odd-1")
    assert call.arguments == ODD_ARGUMENTS
    assert call.tool == "write_file"
    assert call.rule == answer["rule"]
    assert before - timedelta(seconds=1) <= call.created_at <= timezone.now()
    assert call.decided_at is not None
    assert call.broker_status == "" and call.broker_is_error is None

    refused = ask(runner, run_id, "write_file", NESTED_ARGUMENTS, call_id="odd-2")
    assert (refused["decision"], refused["source"]) == ("deny", "schema")
    call = ToolCall.objects.get(run_id=run_id, tool_call_id="odd-2")
    assert call.arguments == NESTED_ARGUMENTS
    assert call.rule is None

    events = list(Event.objects.filter(run_id=run_id).order_by("seq"))
    assert [(e.seq, e.type) for e in events] == [
        (1, "run.created"),
        (2, "tool.requested"),
        (3, "tool.decision"),
        (4, "tool.requested"),
        (5, "tool.decision"),
    ]
    assert [events[2].data["tool_call_id"], events[4].data["tool_call_id"]] == ["odd-1", "odd-2"]
    assert chain_verify(run_id) == []
    counter = RunCounter.objects.get(run_id=run_id)
    assert (counter.last_seq, counter.last_hash) == (5, events[-1].hash)


@pytest.mark.django_db
def test_a_retry_gets_its_recorded_answer_even_when_a_new_decision_would_differ(make_run):
    run_id, runner = make_run()
    first = ask(runner, run_id, "run_command", {"command": "git status"})
    assert first["decision"] == "allow"
    events = Event.objects.filter(run_id=run_id).count()
    exhaust_budget(run_id)  # a fresh decision would now be a budget denial

    retry = ask(runner, run_id, "run_command", {"command": "git status"})

    assert retry == first
    assert Event.objects.filter(run_id=run_id).count() == events
    assert ToolCall.objects.filter(run_id=run_id).count() == 1


@pytest.mark.django_db
def test_every_call_sees_the_budget_as_it_is_now(make_run):
    run_id, runner = make_run()
    assert ask(runner, run_id, "run_command", {"command": "git status"}, call_id="a")[
        "decision"
    ] == ("allow")
    exhaust_budget(run_id)
    denied = ask(runner, run_id, "run_command", {"command": "git status"}, call_id="b")
    assert (denied["decision"], denied["source"]) == ("deny", "budget")
    RunBudget.objects.filter(run_id=run_id).update(spent=0)
    allowed = ask(runner, run_id, "run_command", {"command": "git status"}, call_id="c")
    assert allowed["decision"] == "allow"


@pytest.mark.django_db
def test_a_process_that_never_compiled_the_policy_reads_its_document(make_run):
    run_id, runner = make_run()
    policy_store.forget_versions()  # as in a freshly started worker
    allowed = ask(runner, run_id, "run_command", {"command": "git status"}, call_id="a")
    denied = ask(runner, run_id, "run_command", {"command": "rm -rf /"}, call_id="b")
    assert (allowed["decision"], denied["decision"]) == ("allow", "deny")
    assert denied["source"] == "policy"


@pytest.mark.django_db
def test_a_run_whose_frozen_policy_version_was_altered_is_not_decided(make_run):
    run_id, runner = make_run()
    policy_store.forget_versions()
    run = Run.objects.get(pk=run_id)
    assert run.policy_digest == run.policy_version.digest
    PolicyVersion.objects.filter(pk=run.policy_version_id).update(digest="0" * 64)

    response = runner.post(
        f"/v1/runs/{run_id}/permission",
        {"session_id": "s-1", "tool_call_id": "c-1", "tool": "read_file", "arguments": {}},
    )

    assert response.status_code == 401
    assert "frozen policy version" in str(response.json())
    assert not ToolCall.objects.filter(run_id=run_id).exists()
    assert Event.objects.filter(run_id=run_id).count() == 1  # run.created only


@pytest.mark.django_db
def test_the_cached_policy_version_carries_nothing_from_one_caller_to_the_next(make_run):
    run_id, _ = make_run()
    run = Run.objects.get(pk=run_id)
    policy_store.forget_versions()
    first = policy_store.frozen_version(run.policy_version_id, run.policy_digest)
    assert first.policy.name == "default"  # loads the policy onto this copy
    Policy.objects.filter(pk=first.policy_id).update(name="renamed-policy")

    second = policy_store.frozen_version(run.policy_version_id, run.policy_digest)

    assert second.policy.name == "renamed-policy"
    assert (second.pk, second.digest) == (first.pk, first.digest)


@pytest.mark.postgres
@pytest.mark.django_db
def test_over_a_kept_connection_the_decisions_are_prepared_and_record_the_same_rows(make_run):
    """With the pool or `DB_CONN_MAX_AGE` a connection outlives its request, and the prebuilt
    statements are prepared on it (parsed and planned once). A retry's unique violation, a
    denial and the ORM reading the rows back must all be as without."""
    from django.db import connection

    run_id, runner = make_run()
    kept = connection.settings_dict["CONN_MAX_AGE"]
    connection.settings_dict["CONN_MAX_AGE"] = None  # as the pool or DB_CONN_MAX_AGE keep it
    try:
        allowed = [
            ask(runner, run_id, "write_file", ODD_ARGUMENTS, call_id=f"kept-{n}") for n in range(3)
        ]
        denied = ask(runner, run_id, "run_command", {"command": "rm -rf /"}, call_id="kept-no")
        retry = ask(runner, run_id, "write_file", ODD_ARGUMENTS, call_id="kept-0")
        after_retry = ask(runner, run_id, "write_file", ODD_ARGUMENTS, call_id="kept-3")
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            prepared = [statement for (statement,) in cursor.fetchall()]
    finally:
        connection.settings_dict["CONN_MAX_AGE"] = kept
        connection.connection.prepare_threshold = None  # as Django leaves it

    assert any("governance_toolcall" in statement for statement in prepared), prepared
    assert any("ledger_event" in statement for statement in prepared), prepared
    assert [answer["decision"] for answer in allowed] == ["allow"] * 3
    assert (denied["decision"], denied["source"]) == ("deny", "policy")
    assert retry == allowed[0]
    assert after_retry["decision"] == "allow"
    calls = ToolCall.objects.filter(run_id=run_id).order_by("created_at", "id")
    assert [call.tool_call_id for call in calls] == [
        "kept-0",
        "kept-1",
        "kept-2",
        "kept-no",
        "kept-3",
    ]
    assert all(call.arguments == ODD_ARGUMENTS for call in calls if call.tool == "write_file")
    events = list(Event.objects.filter(run_id=run_id).order_by("seq"))
    assert len(events) == 1 + 2 * 5  # run.created, then requested + decision per new call
    assert chain_verify(run_id) == []
    counter = RunCounter.objects.get(run_id=run_id)
    assert (counter.last_seq, counter.last_hash) == (11, events[-1].hash)
