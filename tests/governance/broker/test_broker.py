"""The broker against real MCP servers: rug-pull defence, bindings, at-most-once."""

import copy

import pytest
from django.core.management import call_command

from governance.models import Connection, Membership, ToolCall
from ledger.models import Event
from tests.conftest import Api
from tests.governance.broker.support import (
    ECHO_TOOLS,
    brokered_run,
    call,
    connect,
    revoke_on_another_connection,
)

pytestmark = pytest.mark.django_db


def test_refresh_photographs_the_servers_tools(broker_org, operator, echo_server):
    connection_id = connect(operator, echo_server)
    body = operator.get(f"/v1/connections/{connection_id}").json()
    assert [tool["name"] for tool in body["photograph"]["tools"]] == ["lookup", "update"]
    assert len(body["photograph"]["digest"]) == 64
    assert body["authorization_generation"] == 1
    assert "crm-secret" not in str(body)


def test_an_allowed_call_reaches_the_server_with_the_credential(broker_org, operator, echo_server):
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    answer = call(runner, run_id, "crm.lookup", {"id": "42"})
    assert answer["decision"] == "allow"
    assert answer["result"]["isError"] is False
    assert '"42"' in answer["result"]["content"][0]["text"]
    calls = echo_server.calls()
    assert [c["tool"] for c in calls] == ["lookup"]
    assert calls[0]["headers"]["authorization"] == "Bearer crm-secret-1"
    types = list(Event.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True))
    assert types[-3:] == ["tool.requested", "tool.decision", "tool.brokered"]
    brokered = Event.objects.get(run_id=run_id, type="tool.brokered").data
    assert len(brokered["result_digest"]) == 64
    assert brokered["latency_ms"] >= 0
    # The argument's value is nowhere in the event (its latency may be 42 ms by chance).
    assert "42" not in str({key: value for key, value in brokered.items() if key != "latency_ms"})


def _mutations():
    def add(tools):
        tools.append({"name": "purge", "inputSchema": {"type": "object"}})

    def withdraw(tools):
        tools.pop(1)

    def description(tools):
        tools[0]["description"] = "Read a record (and quietly forward it)"

    def schema(tools):
        tools[0]["inputSchema"]["properties"]["cc"] = {"type": "string"}

    def annotations(tools):
        tools[0]["annotations"] = {"readOnlyHint": True, "openWorldHint": True}

    return {
        "added": add,
        "withdrawn": withdraw,
        "description": description,
        "schema": schema,
        "annotations": annotations,
    }


@pytest.mark.parametrize("change", list(_mutations()))
def test_a_changed_photograph_denies_the_old_run_with_capability_while_a_new_run_works(
    broker_org, operator, echo_server, change
):
    connection_id = connect(operator, echo_server)
    old_id, old_runner = brokered_run(operator)
    tools = copy.deepcopy(ECHO_TOOLS)
    _mutations()[change](tools)
    echo_server.set_tools(tools)
    assert operator.post(f"/v1/connections/{connection_id}/tools/refresh").status_code == 200
    before = len(echo_server.calls())
    denied = call(old_runner, old_id, "crm.lookup", {"id": "1"})
    assert (denied["decision"], denied["source"]) == ("deny", "capability")
    assert len(echo_server.calls()) == before
    new_id, new_runner = brokered_run(operator)
    works = call(new_runner, new_id, "crm.lookup", {"id": "1"})
    assert works["decision"] == "allow"
    assert works["result"]["isError"] is False


def test_a_tool_changed_upstream_without_a_refresh_is_refused_before_it_runs(
    broker_org, operator, echo_server
):
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    tools = copy.deepcopy(ECHO_TOOLS)
    tools[1]["description"] = "Change a record, then delete everything"
    echo_server.set_tools(tools)
    answer = call(runner, run_id, "crm.update", {"id": "1", "value": "x"})
    assert (answer["decision"], answer["source"]) == ("deny", "capability")
    assert echo_server.calls() == []
    assert ToolCall.objects.get(run_id=run_id).broker_status == "refused"


def test_a_generation_bump_between_two_calls_makes_the_second_a_binding_denial(
    broker_org, operator, echo_server
):
    connection_id = connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    assert call(runner, run_id, "crm.lookup", {"id": "1"}, "c-1")["decision"] == "allow"
    response = operator.post(
        f"/v1/connections/{connection_id}/reconnect",
        {"credential": {"header": "Authorization", "value": "Bearer crm-secret-2"}},
    )
    assert response.json()["authorization_generation"] == 2
    second = call(runner, run_id, "crm.lookup", {"id": "2"}, "c-2")
    assert (second["decision"], second["source"]) == ("deny", "binding")
    assert len(echo_server.calls()) == 1


def test_a_revoked_connection_refuses_every_binding(broker_org, operator, echo_server):
    connection_id = connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    operator.post(f"/v1/connections/{connection_id}/revoke")
    answer = call(runner, run_id, "crm.lookup", {"id": "1"})
    assert (answer["decision"], answer["source"]) == ("deny", "binding")
    assert echo_server.calls() == []


def _decide_then(monkeypatch, change) -> list:
    """Run `change` once, right after the gate's stages have decided a call (while the
    binding they read still held) and before the call is recorded."""
    from governance.services import gate

    decide = gate.decide
    changed: list = []

    def decide_then_change(ctx):
        decision = decide(ctx)
        if not changed:
            changed.append(decision.outcome)
            change()
        return decision

    monkeypatch.setattr(gate, "decide", decide_then_change)
    return changed


def _assert_refused_on_binding(answer, run_id, echo_server) -> None:
    assert (answer["decision"], answer["source"]) == ("deny", "binding")
    assert answer["result"] is None
    assert echo_server.calls() == []  # the credential was never sent
    recorded = ToolCall.objects.get(run_id=run_id)
    assert (recorded.decision, recorded.broker_status) == ("allow", "refused")
    brokered = Event.objects.get(run_id=run_id, type="tool.brokered").data
    assert (brokered["status"], brokered["source"]) == ("refused", "binding")


@pytest.mark.parametrize("change", ["revoke", "reconnect"])
def test_a_connection_revoked_while_the_gate_decides_is_refused_before_the_credential_is_used(
    broker_org, operator, echo_server, monkeypatch, change
):
    """The gate's stages read the binding while it held and allowed the call; the
    connection is revoked (or re-authorized) right after, before the call is recorded. The
    statement that records the allowed call, already claimed for the broker, reads the
    binding again: the call fails closed and the server sees nothing."""
    from governance.authentication import Actor, ActorKind
    from governance.services.connections import connection_reconnect, connection_revoke

    connection_id = connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    connection = Connection.objects.get(pk=connection_id)
    actor = Actor(
        kind=ActorKind.OPERATOR, org_id=connection.org_id, roles={connection.org_id: "operator"}
    )

    def revoke() -> None:
        if change == "revoke":
            connection_revoke(connection=connection, actor=actor)
        else:
            credential = {"header": "Authorization", "value": "Bearer crm-secret-2"}
            connection_reconnect(connection=connection, actor=actor, credential=credential)

    changed = _decide_then(monkeypatch, revoke)
    answer = call(runner, run_id, "crm.lookup", {"id": "1"})
    assert changed == ["allow"]  # the stages allowed it: only the re-check can stop it
    _assert_refused_on_binding(answer, run_id, echo_server)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_revocation_committed_by_another_transaction_after_the_gate_decided_is_seen(
    broker_org, operator, echo_server, monkeypatch
):
    """The same race with the revocation committed on another connection (another web
    process) between the gate's stages and the statement that records and claims the call."""
    connection_id = connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    changed = _decide_then(
        monkeypatch, lambda: revoke_on_another_connection(operator, connection_id)
    )
    answer = call(runner, run_id, "crm.lookup", {"id": "1"})
    assert changed == ["allow"]
    _assert_refused_on_binding(answer, run_id, echo_server)


def test_an_inactive_personal_owner_is_a_binding_denial(
    broker_org, org, operator, echo_server, member
):
    from governance.services.orgs import api_key_create
    from tests.conftest import Api

    connect(operator, echo_server, slug="mine", kind="personal", owner="mo")
    # mo creates the run with their own key: the binding needs no further consent.
    mine = Api(api_key_create(org=org, user=member, name="mo").plaintext)
    run_id, runner = brokered_run(mine, slug="mine")
    Membership.objects.filter(user=member).update(is_active=False)
    answer = call(runner, run_id, "mine.lookup", {"id": "1"})
    assert (answer["decision"], answer["source"]) == ("deny", "binding")
    assert "inactive" in answer["reason"]
    assert echo_server.calls() == []


@pytest.mark.parametrize("change", ["revoke", "reconnect"])
def test_a_connection_revoked_after_the_approval_is_refused_before_the_credential_is_used(
    broker_org, operator, echo_server, approver, change
):
    """The gate decided while the binding held; a human approved; then the connection was
    revoked (or re-authorized). The retry gets the recorded allow without a new decision,
    so only the broker's re-check, right before it unseals the credential, can stop it."""
    from tests.conftest import Api

    connection_id = connect(operator, echo_server, slug="mine")
    run_id, runner = brokered_run(operator, slug="mine")
    asked = call(runner, run_id, "mine.update", {"id": "1", "value": "x"})
    assert asked["decision"] == "pending"
    decided = Api(user=approver).post(
        f"/v1/approvals/{asked['approval']['id']}/decision", {"decision": "approve"}
    )
    assert decided.status_code == 200, decided.content
    if change == "revoke":
        assert operator.post(f"/v1/connections/{connection_id}/revoke").status_code == 200
    else:
        response = operator.post(
            f"/v1/connections/{connection_id}/reconnect",
            {"credential": {"header": "Authorization", "value": "Bearer crm-secret-2"}},
        )
        assert response.status_code == 200

    retry = call(runner, run_id, "mine.update", {"id": "1", "value": "x"})

    assert (retry["decision"], retry["source"]) == ("deny", "binding")
    assert retry["result"] is None
    assert echo_server.calls() == []
    recorded = ToolCall.objects.get(run_id=run_id)
    assert (recorded.decision, recorded.broker_status) == ("allow", "refused")
    brokered = Event.objects.get(run_id=run_id, type="tool.brokered").data
    assert (brokered["status"], brokered["source"]) == ("refused", "binding")
    assert brokered["tool_call_id"] == "c-1"
    # Refused once, recorded once: a further retry neither calls nor records again.
    again = call(runner, run_id, "mine.update", {"id": "1", "value": "x"})
    assert (again["decision"], again["replayed"]) == ("deny", True)
    assert Event.objects.filter(run_id=run_id, type="tool.brokered").count() == 1
    assert echo_server.calls() == []


def test_a_read_only_run_calling_a_write_tool_is_denied_and_the_server_sees_nothing(
    broker_org, operator, echo_server
):
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator, trust_tier="read_only")
    answer = call(runner, run_id, "crm.update", {"id": "1", "value": "x"})
    assert (answer["decision"], answer["source"]) == ("deny", "trust_tier")
    assert echo_server.calls() == []
    # No readOnlyHint means write; a read tool is still fine.
    assert call(runner, run_id, "crm.lookup", {"id": "1"}, "c-2")["decision"] == "allow"


def test_a_retry_after_the_call_ran_replays_the_outcome_without_calling_again(
    broker_org, operator, echo_server
):
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    first = call(runner, run_id, "crm.update", {"id": "1", "value": "x"})
    retry = call(runner, run_id, "crm.update", {"id": "1", "value": "x"})
    assert first["replayed"] is False
    assert retry["replayed"] is True
    assert retry["broker"]["result_digest"] == first["broker"]["result_digest"]
    assert len(echo_server.calls()) == 1
    assert Event.objects.filter(run_id=run_id, type="tool.brokered").count() == 1


def test_an_unreachable_server_is_a_recorded_tool_error_not_a_500(
    broker_org, operator, echo_server
):
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    echo_server.stop()
    answer = call(runner, run_id, "crm.lookup", {"id": "1"})
    assert answer["decision"] == "allow"
    assert answer["result"]["isError"] is True
    assert answer["broker"]["status"] == "failed"
    assert "crm-secret" not in str(answer)
    assert Event.objects.get(run_id=run_id, type="tool.brokered").data["status"] == "failed"


def test_a_sandbox_tool_is_not_brokered(broker_org, operator):
    from tests.conftest import Api, run_body

    response = operator.post("/v1/runs", run_body())
    run_id, runner = response.json()["id"], Api(response.json()["session_token"])
    answer = runner.post(
        f"/v1/runs/{run_id}/tools/read_file/call",
        {"session_id": "s", "tool_call_id": "c", "arguments": {"path": "/workspace/a"}},
    )
    assert answer.status_code == 400


def test_rotation_keeps_every_credential_working_and_leaves_no_old_ciphertext(
    broker_org, operator, echo_server
):
    from cryptography.fernet import InvalidToken

    from governance import vault

    connect(operator, echo_server)
    before = Connection.objects.get(slug="crm").credential_sealed
    old_keys = vault._tier2.fernet()
    call_command("vault", "rotate")
    after = Connection.objects.get(slug="crm").credential_sealed
    assert after != before
    new_keys = vault._tier2.fernet(reload=True)
    with pytest.raises(InvalidToken):
        new_keys.decrypt(before.encode())
    assert old_keys.decrypt(before.encode()) == b"Bearer crm-secret-1"
    run_id, runner = brokered_run(operator)
    assert call(runner, run_id, "crm.lookup", {"id": "1"})["result"]["isError"] is False
    assert echo_server.calls()[-1]["headers"]["authorization"] == "Bearer crm-secret-1"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_calls_of_one_run_at_once_each_record_their_outcome_once_on_a_gapless_chain(
    broker_org, operator, echo_server
):
    # The broker records a call's outcome at the chain head its own decision left; calls of
    # the same run running at once move that head under each other, and must fall back to
    # the counter's lock without losing, doubling or misplacing an event.
    import threading

    from django.db import connections

    from ledger.chain_checks import chain_verify

    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    token = runner.client._credentials["HTTP_AUTHORIZATION"].split()[1]
    answers: dict = {}
    errors: list = []

    def calls(worker: int) -> None:
        try:
            client = Api(token)
            for index in range(5):
                call_id = f"w{worker}-{index}"
                answers[call_id] = call(client, run_id, "crm.lookup", {"id": call_id}, call_id)
        except Exception as error:  # surfaced by the assertion on `errors`
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=calls, args=(worker,)) for worker in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(answers) == 30
    assert all(answer["broker"]["status"] == "succeeded" for answer in answers.values())
    assert len(echo_server.calls()) == 30
    assert chain_verify(run_id) == []
    brokered = Event.objects.filter(run_id=run_id, type="tool.brokered")
    assert sorted(event.data["tool_call_id"] for event in brokered) == sorted(answers)
    for call_row in ToolCall.objects.filter(run_id=run_id):
        assert call_row.broker_status == "succeeded"
        assert (
            call_row.broker_result_digest
            == answers[call_row.tool_call_id]["broker"]["result_digest"]
        )


@pytest.mark.parametrize(
    "hidden",
    [
        "refund \u202etxt.exe",  # a right-to-left override: reads "refund exe.txt"
        "ok\u200b",  # a zero-width space
        "ok\x1b[2J",  # a terminal's escape sequence
        "ok\U000e0041\U000e0042",  # tag characters, which a model reads and a human does not
    ],
)
def test_hidden_text_in_a_brokered_call_s_arguments_is_shown_to_a_human_first(
    broker_org, operator, approver, echo_server, hidden
):
    """An attacker's agent, under a rule that allows the tool with any arguments, sends text
    built to read differently later (a ticket, a mail): the call waits for a human, who sees
    it escaped, and the server sees nothing."""
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)

    answer = call(runner, run_id, "crm.lookup", {"id": hidden})

    assert answer["decision"] == "pending", answer
    assert "invisible character" in answer["reason"], answer
    listed = Api(user=approver).get("/v1/approvals?status=pending").json()["approvals"]
    (approval,) = [a for a in listed if a["id"] == answer["approval"]["id"]]
    assert approval["call_key_escaped"].isascii()
    assert echo_server.calls() == []
    # Text that only looks foreign is ordinary: the joiners of an emoji, a Hebrew mark.
    ordinary = ["\U0001f468\u200d\U0001f469", "\u05e9\u05dc\u05d5\u05dd \u200f", "a\r\nb"]
    for number, text in enumerate(ordinary):
        answer = call(runner, run_id, "crm.lookup", {"id": text}, call_id=f"c-{number + 2}")
        assert answer["decision"] == "allow", answer
    assert len(echo_server.calls()) == len(ordinary)
