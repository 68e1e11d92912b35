"""A settled decision is recorded in one statement at the ledger head its token check read
(`gate._record_at_head`), and under the counter's lock when that head has moved. Attacked
on PostgreSQL: many new calls of one run at once, duplicates racing their first call, a
head made stale between the token check and the record. The chain must stay one gapless
chain, each call recorded once with its two events, and a retry answered from the record."""

import threading
from collections import Counter

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from governance.models import ToolCall
from governance.models.keys import hash_secret_token
from governance.run_sessions import ledger_head_as_read, run_for_session_token
from governance.services.gate import permission_request
from ledger.chain_checks import chain_verify
from ledger.models import Event
from ledger.redaction import redact
from ledger.services import events_append
from tests.conftest import Api, run_body
from tests.governance.broker.support import (
    brokered_run,
    call,
    connect,
    revoke_on_another_connection,
)
from tests.governance.broker.test_broker import _decide_then as decide_then

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

AT_HEAD = "at head"
LOCKED = "locked"


class Statements:
    """Which way each append went, from the statements this thread's connection ran."""

    def __init__(self) -> None:
        self.kinds: list[str] = []

    def __call__(self, execute, sql, params, many, context):
        if sql.startswith('WITH head AS (UPDATE "ledger_runcounter"'):
            self.kinds.append(AT_HEAD)
        elif sql.startswith('UPDATE "ledger_runcounter" SET "last_seq" = "last_seq" +'):
            self.kinds.append(LOCKED)
        return execute(sql, params, many, context)


def new_run(operator) -> tuple[str, str]:
    response = operator.post("/v1/runs", run_body())
    assert response.status_code == 201, response.content
    return response.json()["id"], response.json()["session_token"]


def post_call(runner: Api, run_id: str, call_id: str, tool: str, arguments: dict):
    return runner.post(
        f"/v1/runs/{run_id}/permission",
        {"session_id": "s-1", "tool_call_id": call_id, "tool": tool, "arguments": arguments},
    )


def assert_one_gapless_chain(run_id, call_ids: set[str]) -> None:
    events = list(Event.objects.filter(run_id=run_id).order_by("seq"))
    assert [event.seq for event in events] == list(range(1, 2 * len(call_ids) + 2))
    assert [event.id for event in events] == sorted(event.id for event in events)
    per_call = Counter(
        (event.data["tool_call_id"], event.type) for event in events if event.seq > 1
    )
    assert per_call == Counter(
        {(call_id, kind): 1 for call_id in call_ids for kind in ("tool.requested", "tool.decision")}
    )
    assert chain_verify(run_id) == []
    assert ToolCall.objects.filter(run_id=run_id).count() == len(call_ids)


def test_many_new_calls_of_one_run_at_once_each_recorded_once_on_one_chain(operator):
    run_id, token = new_run(operator)
    workers, calls = 6, 12
    start = threading.Barrier(workers)
    answers: dict[str, list[dict]] = {}
    kinds: list[str] = []
    problems: list[str] = []
    lock = threading.Lock()

    def work(worker: int) -> None:
        runner = Api(token)
        statements = Statements()
        try:
            start.wait()
            with connection.execute_wrapper(statements):
                for n in range(calls):
                    # Workers w and w + 3 send the same ids for even n: duplicates racing.
                    owner = worker % 3 if n % 2 == 0 else worker
                    call_id = f"c-{owner}-{n}"
                    if n % 3 == 0:
                        tool, arguments = "run_command", {"command": f"rm -rf /tmp/{call_id}"}
                    else:
                        tool, arguments = "read_file", {"path": f"/workspace/{call_id}"}
                    response = post_call(runner, run_id, call_id, tool, arguments)
                    if response.status_code != 200:
                        problems.append(f"{call_id}: {response.status_code} {response.content!r}")
                        continue
                    with lock:
                        answers.setdefault(call_id, []).append(response.json())
        except Exception as error:  # reported below
            problems.append(f"worker {worker}: {error!r}")
        finally:
            with lock:
                kinds.extend(statements.kinds)
            connection.close()

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert problems == []
    assert set(kinds) <= {AT_HEAD, LOCKED} and kinds
    # A duplicate got the answer its first call was recorded with, whichever way it went.
    for call_id, given in answers.items():
        assert all(answer == given[0] for answer in given), call_id
        expected = "deny" if call_id.endswith(("-0", "-3", "-6", "-9")) else "allow"
        assert given[0]["decision"] == expected, call_id
    assert_one_gapless_chain(run_id, set(answers))
    call_command("ledger", "verify", "--all")


def test_a_head_that_moved_after_the_token_check_is_recorded_under_the_lock(operator):
    run_id, token = new_run(operator)
    run = run_for_session_token(hash_secret_token(token))
    created = Event.objects.get(run_id=run_id, seq=1)
    assert ledger_head_as_read(run) == (1, created.hash)
    # Another append to the run between this request's token check and its record.
    with transaction.atomic():
        events_append(run_id=run_id, events=[("tool.requested", redact({"between": True}))])

    statements = Statements()
    with connection.execute_wrapper(statements):
        answer = permission_request(
            run=run,
            session_id="s-1",
            tool_call_id="after-move",
            tool="read_file",
            arguments={"path": "/workspace/a"},
            wait_seconds=0,
        )
    # Tried at the stale head (nothing written), then recorded under the lock.
    assert statements.kinds == [AT_HEAD, LOCKED]
    assert answer.tool_call.decision == "allow" and answer.tool_call.pk is not None
    events = list(Event.objects.filter(run_id=run_id).order_by("seq"))
    assert [(e.seq, e.type) for e in events] == [
        (1, "run.created"),
        (2, "tool.requested"),
        (3, "tool.requested"),
        (4, "tool.decision"),
    ]
    assert events[3].data["tool_call_id"] == "after-move"
    assert chain_verify(run_id) == []
    # The instance now knows where the chain ends: its next call goes in one statement.
    assert ledger_head_as_read(run) == (4, events[3].hash) == answer.ledger_head
    statements.kinds.clear()
    with connection.execute_wrapper(statements):
        permission_request(
            run=run,
            session_id="s-1",
            tool_call_id="next",
            tool="run_command",
            arguments={"command": "rm -rf /"},
            wait_seconds=0,
        )
    assert statements.kinds == [AT_HEAD]
    assert Event.objects.filter(run_id=run_id).count() == 6
    assert chain_verify(run_id) == []


def test_a_retry_of_a_call_recorded_at_the_head_writes_nothing_and_gets_the_record(operator):
    run_id, token = new_run(operator)
    runner = Api(token)
    statements = Statements()
    with connection.execute_wrapper(statements):
        first = post_call(runner, run_id, "once", "read_file", {"path": "/workspace/x"})
    assert first.status_code == 200, first.content
    assert statements.kinds == [AT_HEAD]  # one statement: no lock, no transaction
    row = ToolCall.objects.get(run_id=run_id, tool_call_id="once")
    assert (row.decision, row.tool) == ("allow", "read_file")
    assert row.arguments == {"path": "/workspace/x"}
    events_before = list(Event.objects.filter(run_id=run_id).values_list("seq", "hash"))

    again = post_call(runner, run_id, "once", "read_file", {"path": "/workspace/x"})
    assert again.status_code == 200 and again.json() == first.json()
    other = post_call(runner, run_id, "once", "run_command", {"command": "rm -rf /"})
    assert other.status_code == 409
    assert other.json()["error"] == "tool_call_id_reused"
    # Neither wrote anything: the refused statement moved no counter and added no event.
    assert list(Event.objects.filter(run_id=run_id).values_list("seq", "hash")) == events_before
    assert ToolCall.objects.filter(run_id=run_id).count() == 1
    assert_one_gapless_chain(run_id, {"once"})


def test_an_allowed_brokered_call_is_recorded_claimed_with_its_binding_in_one_statement(
    broker_org, operator, echo_server
):
    """The call, its events, the broker's claim and the binding's re-read are one statement;
    the broker then sends it with the credential and records the outcome at the head the
    gate's statement left (one more)."""
    connection_id = connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    statements = Statements()
    with connection.execute_wrapper(statements):
        answer = call(runner, run_id, "crm.lookup", {"id": "7"})
    assert answer["decision"] == "allow" and answer["result"] is not None
    assert statements.kinds == [AT_HEAD, AT_HEAD]  # the gate's record, the broker's
    assert len(echo_server.calls()) == 1
    recorded = ToolCall.objects.get(run_id=run_id)
    assert (recorded.decision, recorded.broker_status) == ("allow", "succeeded")
    assert [e.type for e in Event.objects.filter(run_id=run_id).order_by("seq")] == [
        "run.created",
        "tool.requested",
        "tool.decision",
        "tool.brokered",
    ]
    assert chain_verify(run_id) == []
    assert connection_id


def test_a_revocation_committed_after_the_gate_decided_is_seen_by_the_one_statement(
    broker_org, operator, echo_server, monkeypatch
):
    """The connection is revoked on another connection (another web process) after the
    gate's stages allowed the call: the one statement that records and claims it re-reads
    the binding in its own snapshot, so the call is refused and nothing is sent."""
    connection_id = connect(operator, echo_server)
    run_id, runner = brokered_run(operator)

    changed = decide_then(
        monkeypatch, lambda: revoke_on_another_connection(operator, connection_id)
    )
    statements = Statements()
    with connection.execute_wrapper(statements):
        answer = call(runner, run_id, "crm.lookup", {"id": "1"})
    assert changed == ["allow"]  # the stages allowed it: only the re-read can stop it
    assert statements.kinds[0] == AT_HEAD  # recorded (and the binding re-read) at the head
    assert (answer["decision"], answer["source"]) == ("deny", "binding")
    assert echo_server.calls() == []
    recorded = ToolCall.objects.get(run_id=run_id)
    assert (recorded.decision, recorded.broker_status) == ("allow", "refused")
    assert chain_verify(run_id) == []


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("read_file", {"path": "/workspace/a"}),
        ("send_email", {"to": "a@example.com"}),  # an ASK: an approval would be opened
    ],
)
def test_a_run_finished_after_the_token_check_records_nothing_after_its_end(
    operator, tool, arguments
):
    """The operator finishes the run between an agent's token check and its record: the
    call is refused as for a finished run, and the ledger ends with `run.finished`."""
    from governance.errors import Conflict
    from governance.models import Approval, Run
    from governance.services.runs import run_finish

    run_id, token = new_run(operator)
    run = run_for_session_token(hash_secret_token(token))  # the token check, still active
    run_finish(run=Run.objects.get(pk=run_id), actor_label="operator key ci")

    statements = Statements()
    with connection.execute_wrapper(statements), pytest.raises(Conflict) as refused:
        permission_request(
            run=run,
            session_id="s-1",
            tool_call_id="late",
            tool=tool,
            arguments=arguments,
            wait_seconds=0,
        )
    assert refused.value.code == "run_finished"
    assert not ToolCall.objects.filter(run_id=run_id).exists()
    assert not Approval.objects.filter(run_id=run_id).exists()
    events = list(Event.objects.filter(run_id=run_id).order_by("seq"))
    assert events[-1].type == "run.finished"
    assert chain_verify(run_id) == []
