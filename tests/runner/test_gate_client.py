"""The gate client over real HTTP: long-polling, retries that re-attach, budget, secrets, auth."""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import pytest

from runner import (
    BudgetExhausted,
    GateAuthError,
    GateClient,
    GateDecision,
    GateProtocolError,
    GateRequestError,
    GateUnavailable,
    Reservation,
    SecretsRefused,
)
from tests.support.waiting import wait_until


def test_an_allowed_call_comes_back_as_allow(fake_gate) -> None:
    with fake_gate.client() as client:
        decision = client.ask("s-1", "c-1", "read_file", {"path": "/workspace/a"})
    assert decision.allowed
    sent = fake_gate.requests_to("/permission")[0]
    assert sent["authorization"] == "Bearer run-token"
    assert sent["body"] == {
        "session_id": "s-1",
        "tool_call_id": "c-1",
        "tool": "read_file",
        "arguments": {"path": "/workspace/a"},
        "wait_seconds": 25,
    }


def test_a_denial_is_data_with_a_tool_error_for_the_model(fake_gate) -> None:
    fake_gate.verdicts["run_command"] = "deny"
    with fake_gate.client() as client:
        decision = client.ask("s-1", "c-1", "run_command", {"command": "rm -rf /"})
    assert not decision.allowed
    assert decision.source == "policy"
    assert decision.as_tool_error() == "Denied by policy rule run_command:*; not run."


def test_a_denial_without_tool_error_text_still_explains_itself() -> None:
    decision = GateDecision.from_response(
        "send_email",
        {"decision": "deny", "source": "trust_tier", "reason": "read-only run", "rule": None},
    )
    assert decision.as_tool_error() == (
        "The permission gate denied the call to send_email (source: trust_tier): "
        "read-only run The call was not run."
    )


def test_an_unknown_decision_fails_closed() -> None:
    with pytest.raises(GateProtocolError):
        GateDecision.from_response("x", {"decision": "maybe"})


def test_a_pending_approval_is_long_polled_until_decided(fake_gate) -> None:
    fake_gate.verdicts["write_file"] = "ask"
    client = fake_gate.client()
    answer: list[GateDecision] = []
    asking = threading.Thread(
        target=lambda: answer.append(
            client.ask("s-1", "c-7", "write_file", {"path": "x"}, wait_seconds=1)
        )
    )
    asking.start()
    fake_gate.wait_for_approval()
    wait_until(
        lambda: len(fake_gate.requests_to("/permission")) >= 2,
        "a long-poll to come back pending and be sent again",
    )
    fake_gate.decide("s-1", "c-7", "approved")
    asking.join()

    assert answer[0].allowed and answer[0].source == "approval"
    polls = fake_gate.requests_to("/permission")
    assert len(polls) >= 2
    assert {(p["body"]["session_id"], p["body"]["tool_call_id"]) for p in polls} == {("s-1", "c-7")}
    assert len(fake_gate.approvals) == 1


def test_waiting_stops_at_total_wait_with_a_pending_decision(fake_gate) -> None:
    fake_gate.verdicts["write_file"] = "ask"
    with fake_gate.client() as client:
        started = time.monotonic()
        decision = client.ask("s-1", "c-1", "write_file", {}, wait_seconds=25, total_wait=0.3)
    assert decision.pending
    # Not one long-poll of 25 s: the client asked the gate to wait only what was left.
    assert time.monotonic() - started < 12
    assert {p["body"]["wait_seconds"] for p in fake_gate.requests_to("/permission")} == {0}
    assert "still waiting for a human approval (approval ap-1)" in decision.as_tool_error()


def test_a_restart_mid_wait_re_attaches_to_the_same_approval(fake_gate) -> None:
    fake_gate.verdicts["write_file"] = "ask"
    client = fake_gate.client(retries=30, backoff=0.05, max_backoff=0.2)
    answer: list[GateDecision] = []
    asking = threading.Thread(
        target=lambda: answer.append(
            client.ask("s-1", "c-9", "write_file", {"path": "/workspace/x"}, wait_seconds=10)
        )
    )
    asking.start()
    approval = fake_gate.wait_for_approval()
    asked_before_the_restart = len(fake_gate.requests_to("/permission"))

    fake_gate.stop()  # the waiting request loses its connection; new ones are refused
    time.sleep(0.6)  # down for a moment: the client's retries meet refused connections
    fake_gate.start()
    wait_until(
        lambda: len(fake_gate.requests_to("/permission")) > asked_before_the_restart,
        "the client to come back after the restart",
    )
    fake_gate.decide("s-1", "c-9", "approved")
    asking.join()

    assert answer and answer[0].allowed
    assert answer[0].approval["id"] == approval["id"]
    assert list(fake_gate.approvals) == [("s-1", "c-9")]
    keys = {(p["body"]["session_id"], p["body"]["tool_call_id"]) for p in fake_gate.requests}
    assert keys == {("s-1", "c-9")}


def test_server_errors_are_retried_with_the_same_ids(fake_gate) -> None:
    fake_gate.injected.extend([503, "drop", 502])
    with fake_gate.client(retries=3) as client:
        decision = client.ask("s-1", "c-3", "read_file", {"path": "a"})
    assert decision.allowed
    polls = fake_gate.requests_to("/permission")
    assert len(polls) == 4
    assert {p["body"]["tool_call_id"] for p in polls} == {"c-3"}


def test_the_client_gives_up_after_its_retries(fake_gate) -> None:
    fake_gate.injected.extend([503] * 10)
    with fake_gate.client(retries=2) as client, pytest.raises(GateUnavailable, match="not run"):
        client.ask("s-1", "c-1", "read_file", {"path": "a"})
    assert len(fake_gate.requests) == 3


def test_an_unreachable_gate_raises_unavailable(fake_gate) -> None:
    fake_gate.stop()
    with fake_gate.client(retries=1) as client, pytest.raises(GateUnavailable):
        client.ask("s-1", "c-1", "read_file", {"path": "a"})


def test_a_refused_token_raises_at_once_without_retrying(fake_gate) -> None:
    client = GateClient(fake_gate.url, "run-1", "another-runs-token", retries=5, backoff=0.01)
    with client, pytest.raises(GateAuthError, match="HTTP 401"):
        client.ask("s-1", "c-1", "read_file", {"path": "a"})
    assert len(fake_gate.requests) == 1


def test_after_finish_the_token_stops_working(fake_gate) -> None:
    with fake_gate.client() as client:
        assert client.finish() == {"status": "finished"}
        with pytest.raises(GateAuthError):
            client.ask("s-1", "c-2", "read_file", {"path": "a"})


def test_the_token_is_never_sent_after_a_redirect(fake_gate, another_server) -> None:
    fake_gate.redirect_to = another_server.url
    with fake_gate.client() as client, pytest.raises(GateProtocolError, match="redirect"):
        client.ask("s-1", "c-1", "read_file", {"path": "a"})
    assert another_server.requests == []


def test_bad_tool_names_never_reach_the_url(fake_gate) -> None:
    with fake_gate.client() as client:
        for name in ("..", ".", "a/b", "x" * 129, ""):
            with pytest.raises(ValueError, match="not a valid tool name"):
                client.ask("s-1", "c-1", name, {})
    assert fake_gate.requests == []


def test_a_reservation_retried_with_its_key_is_the_same_reservation(fake_gate) -> None:
    with fake_gate.client() as client:
        first = client.reserve("turn-1", 4096, 12000)
        again = client.reserve("turn-1", 4096, 12000)
        refused = client.reserve("turn-2", 4096, 12000)
    assert isinstance(first, Reservation) and first.reserved_tokens == 16096
    assert again == first
    assert isinstance(refused, BudgetExhausted)
    assert refused.remaining_tokens == 20_000 - 16096
    assert "budget is exhausted" in refused.as_tool_error()


def test_settling_sends_the_usage_and_cost_as_a_decimal_string(fake_gate) -> None:
    with fake_gate.client() as client:
        reservation = client.reserve("turn-1", 100, 100)
        client.settle(reservation.id, 80, 20, cost_usd=Decimal("0.0123"))
        client.settle(reservation.id, 80, 20)
    assert fake_gate.settlements == [
        {
            "path": f"/v1/runs/run-1/budget/reservations/{reservation.id}/settle",
            "input_tokens": 80,
            "output_tokens": 20,
            "cost_usd": "0.0123",
        },
        {
            "path": f"/v1/runs/run-1/budget/reservations/{reservation.id}/settle",
            "input_tokens": 80,
            "output_tokens": 20,
        },
    ]


def test_secrets_are_fetched_per_tool_and_refused_to_read_only_runs(fake_gate) -> None:
    fake_gate.secrets["deploy"] = {"DEPLOY_TOKEN": "s3cret"}
    with fake_gate.client() as client:
        ids = {"session_id": "s-1", "tool_call_id": "c-1"}
        assert client.fetch_secrets("deploy", **ids) == {"DEPLOY_TOKEN": "s3cret"}
        assert client.fetch_secrets("read_file", **ids) == {}
        fake_gate.read_only = True
        with pytest.raises(SecretsRefused):
            client.fetch_secrets("deploy", **ids)
    assert fake_gate.requests[0]["path"] == "/v1/runs/run-1/secrets"


def test_a_brokered_call_returns_the_governed_result_and_a_retry_is_replayed(fake_gate) -> None:
    fake_gate.brokered_results["jira.search"] = {
        "content": [{"type": "text", "text": "3 issues"}],
        "isError": False,
    }
    with fake_gate.client() as client:
        first = client.call_brokered("s-1", "c-1", "jira.search", {"q": "bug"})
        again = client.call_brokered("s-1", "c-1", "jira.search", {"q": "bug"})
    assert first.allowed and first.result["content"][0]["text"] == "3 issues"
    assert again.replayed and again.result is None
    assert fake_gate.requests[0]["path"] == "/v1/runs/run-1/tools/jira.search/call"
    assert fake_gate.brokered_runs == {("s-1", "c-1"): 1}


def test_other_client_errors_are_not_retried(fake_gate) -> None:
    fake_gate.injected.append(400)
    with fake_gate.client() as client, pytest.raises(GateRequestError, match="HTTP 400"):
        client.ask("s-1", "c-1", "read_file", {"path": "a"})
    assert len(fake_gate.requests) == 1
