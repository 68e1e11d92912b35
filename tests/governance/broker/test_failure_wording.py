"""What the agent reads when a brokered call fails: whether the server may have run it.

A review (56) saw a write tool run by the upstream, then answered with something that was not
MCP, reported to the agent as "The tool could not be reached": read literally, that invites a
retry under a fresh id, which runs the write twice. A failure after the request was sent (a
timeout, an answer that is not MCP, the server's own error) now says the server may have run
the call; only a failure before anything was sent (no connection) says it was not called.
"""

import pytest

from tests.governance.broker.support import brokered_run, call, connect

pytestmark = pytest.mark.django_db


def failure_text(answer) -> str:
    assert answer["decision"] == "allow", answer
    assert answer["result"]["isError"] is True, answer
    return answer["result"]["content"][0]["text"]


def test_a_call_the_server_received_but_did_not_answer_in_time_may_have_run(
    broker_org, operator, echo_server, settings
):
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    settings.FLUIDBOX_MCP_TIMEOUT = 1

    answer = call(
        runner, run_id, "crm.update", {"id": "1", "value": "v", "sleep_seconds": 60}, "c-slow"
    )

    text = failure_text(answer)
    assert "did not answer within 1 s" in text
    assert "The server may have run it: check before calling it again." in text
    assert "could not be" not in text
    # It had: the upstream received the call.
    assert [c["tool"] for c in echo_server.calls()] == ["update"]


def test_a_call_no_server_received_says_it_was_not_called(
    broker_org, operator, echo_server, settings
):
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    received_before = len(echo_server.calls())
    echo_server.stop()

    answer = call(runner, run_id, "crm.update", {"id": "1", "value": "v"}, "c-down")

    text = failure_text(answer)
    assert text == "The tool could not be called: could not connect to the MCP server"
    assert len(echo_server.calls()) == received_before
