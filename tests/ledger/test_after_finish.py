"""What may follow `run.finished`: only the broker's records of the calls in flight at the
finish, which `run.finished` lists. Anything else after it is named, online and offline; a
run's bundle that shows every listed record is the whole run, and one that does not is
INCOMPLETE; and no call of a finished run is claimed by the broker, so the list is exact."""

import threading

import pytest
from django.db import connections, transaction

from governance.errors import Conflict
from governance.models import Run, RunStatus, ToolCall
from governance.services.broker import broker_call
from governance.services.policies import policy_save
from governance.services.runs import run_finish
from ledger.chain_checks import chain_verify
from ledger.models import Event, EventType
from ledger.redaction import redact
from ledger.services import event_append
from tests.conftest import Api
from tests.governance.broker.support import brokered_run, call, connect
from tests.ledger.support import checkpoint_now, export, offline_verify, vkey
from tests.support.waiting import wait_until, wait_until_waiting_on_locks

ASK_UPDATES = """
name: default
rules:
  - pattern: "crm.lookup:*"
    action: ALWAYS
  - pattern: "crm.update:*"
    action: ASK
"""


def types(run_id) -> list[str]:
    return list(Event.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True))


def finished_event(run_id) -> dict:
    return Event.objects.get(run_id=run_id, type=EventType.RUN_FINISHED).data


def verify_run_bundle(tmp_path, org, run_id, name: str):
    checkpoint_now(org)
    return offline_verify(export(tmp_path, name, run=run_id), vkey(org))


@pytest.mark.django_db(transaction=True)
def test_a_call_in_flight_at_the_finish_is_listed_and_its_record_completes_the_run(
    broker_org, operator, echo_server, tmp_path
):
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    release = tmp_path / "release"
    # The agent's call id is also a secret among its arguments: the finish must name the
    # call as the broker's record will, masked alike.
    secret_id = "sk-live-9f8e7d6c5b4a39281706"
    answers: list = []

    def in_flight_call() -> None:
        try:
            answers.append(
                call(
                    runner,
                    run_id,
                    "crm.lookup",
                    {"id": "7", "api_key": secret_id, "hold_until_file": str(release)},
                    call_id=secret_id,
                )
            )
        finally:
            connections.close_all()

    caller = threading.Thread(target=in_flight_call)
    caller.start()
    try:
        wait_until(lambda: len(echo_server.calls()) == 1, "the call reached the upstream")
        assert runner.post(f"/v1/runs/{run_id}/finish").status_code == 200
        listed = finished_event(run_id)["in_flight"]
        assert listed == [{"tool_call_id": "[redacted]", "session_id": "s-1", "tool": "crm.lookup"}]
        assert secret_id not in str(listed)

        # Exported now, the run's bundle shows the finish but not the record that may follow.
        before = verify_run_bundle(tmp_path, broker_org, run_id, "before.jsonl")
        assert before.returncode == 3, before.stdout + before.stderr
        assert before.stdout.startswith("INCOMPLETE: run ")
        assert "with 1 call(s) in flight whose broker records are not shown" in before.stdout
        assert "(tool_call_id [redacted])" in before.stdout
    finally:
        release.touch()
        caller.join()

    assert answers and answers[0]["decision"] == "allow"
    assert answers[0]["broker"]["status"] == "succeeded"
    assert types(run_id)[-2:] == ["run.finished", "tool.brokered"]
    assert chain_verify(run_id) == []
    after = verify_run_bundle(tmp_path, broker_org, run_id, "after.jsonl")
    assert after.returncode == 0, after.stdout + after.stderr
    assert after.stdout.rstrip().endswith(
        "with 1 call(s) in flight, whose broker records are shown: no other event can follow, "
        "these are all the run's"
    )


@pytest.mark.parametrize(
    "forged",
    [
        (EventType.TOOL_DECISION, {"tool_call_id": "late", "tool": "crm.update"}),
        (EventType.APPROVAL_DECIDED, {"approval_id": 1, "outcome": "approved"}),
        (EventType.BUDGET_SETTLED, {"reservation_id": 1, "input_tokens": 0}),
        # A broker record, but of a call the finish did not list as in flight.
        (EventType.TOOL_BROKERED, {"tool_call_id": "late", "session_id": "s-1"}),
    ],
    ids=["decision", "approval", "settlement", "unlisted-broker-record"],
)
@pytest.mark.django_db
def test_an_event_appended_after_the_finish_is_named_online_and_offline(
    org, make_run, tmp_path, forged
):
    # Someone with the application's own code and database (an insider, a bug) appends a
    # well-chained event to a finished run: every hash links, so only the rule catches it.
    run_id, runner = make_run()
    assert runner.post(f"/v1/runs/{run_id}/finish").status_code == 200
    assert finished_event(run_id)["in_flight"] == []
    kind, data = forged
    with transaction.atomic():
        event_append(run_id=run_id, type=kind, redacted=redact(data))
    seq = Event.objects.get(run_id=run_id, type=EventType.RUN_FINISHED).seq + 1

    breaks = chain_verify(run_id)
    assert [(b.seq, b.problem.split(":")[0]) for b in breaks] == [
        (
            seq,
            f"a {kind} event after run.finished (seq {seq - 1})"
            if kind != EventType.TOOL_BROKERED
            else f"a tool.brokered event after run.finished (seq {seq - 1}) for a call it did "
            "not list as in flight, or recorded twice",
        )
    ]
    result = verify_run_bundle(tmp_path, org, run_id, "forged.jsonl")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.startswith("FAIL: record ")
    assert f"seq {seq}," in result.stderr and "after run.finished" in result.stderr


@pytest.mark.django_db
def test_a_run_finished_with_nothing_in_flight_is_whole_in_its_bundle(org, make_run, tmp_path):
    run_id, runner = make_run()
    assert runner.post(f"/v1/runs/{run_id}/finish").status_code == 200
    result = verify_run_bundle(tmp_path, org, run_id, "run.jsonl")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith(
        "with no call in flight: no event can follow it, these are all the run's"
    )


def _approved_call(operator, approver, run_id, runner) -> str:
    pending = call(runner, run_id, "crm.update", {"id": "1", "value": "x"})
    assert pending["decision"] == "pending", pending
    approval_id = pending["approval"]["id"]
    decided = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve"}
    )
    assert decided.status_code == 200, decided.content
    return approval_id


@pytest.mark.django_db(transaction=True)
def test_a_claim_waiting_on_a_finish_claims_nothing_once_it_commits(
    broker_org, operator, approver, echo_server
):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's row locks; SQLite runs one writer at a time")
    policy_save(org=broker_org, text=ASK_UPDATES, author=None)
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    _approved_call(operator, approver, run_id, runner)
    # The retry's token check read the run active; then the finish takes the run's row, and
    # the broker's claim of the approved call comes after the gate replayed its answer.
    checked = Run.objects.get(pk=run_id)
    locked, finish = threading.Event(), threading.Event()
    outcome: list = []

    def finish_when_told() -> None:
        try:
            with transaction.atomic():
                Run.objects.select_for_update(no_key=True).get(pk=run_id)
                locked.set()
                finish.wait(timeout=300)
                run_finish(run=Run.objects.get(pk=run_id), actor_label="test")
        finally:
            connections.close_all()

    def claim() -> None:
        try:
            broker_call(
                run=checked,
                session_id="s-1",
                tool_call_id="c-1",
                tool="crm.update",
                arguments={"id": "1", "value": "x"},
                wait_seconds=0,
            )
            outcome.append("ran")
        except Conflict as error:
            outcome.append(error.code)
        finally:
            connections.close_all()

    finisher = threading.Thread(target=finish_when_told)
    finisher.start()
    assert locked.wait(timeout=300)
    claimer = threading.Thread(target=claim)
    claimer.start()
    try:
        wait_until_waiting_on_locks(1, "the broker's claim waits for the run's row")
    finally:
        finish.set()
        finisher.join()
        claimer.join()
    # Claimed before the finish, the call would be in flight and listed; it waited, so
    # nothing was claimed, sent or recorded after `run.finished`.
    assert outcome == ["run_finished"]
    assert ToolCall.objects.get(run_id=run_id, tool_call_id="c-1").broker_status == ""
    assert finished_event(run_id)["in_flight"] == []
    assert echo_server.calls() == []
    assert Run.objects.get(pk=run_id).status == RunStatus.FINISHED
    assert types(run_id)[-1] == "run.finished"
    assert chain_verify(run_id) == []
