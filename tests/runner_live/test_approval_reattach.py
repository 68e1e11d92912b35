"""The runner's client against a server that dies while it waits for an approval."""

import signal
import threading

import httpx
import pytest

from governance.models import Approval, ToolCall
from ledger.chain_checks import chain_verify
from ledger.models import Event
from runner import GateClient
from tests.runner_live.conftest import create_run, decide
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow


class CountingTransport(httpx.HTTPTransport):
    """The real transport, counting requests sent and those that never got an answer."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0
        self.settled = 0
        self.failures = 0

    @property
    def in_flight(self) -> int:
        return self.sent - self.settled

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        try:
            return super().handle_request(request)
        except httpx.TransportError:
            self.failures += 1
            raise
        finally:
            self.settled += 1


def test_a_retry_after_a_restart_mid_wait_reattaches_to_the_same_approval(
    fluidbox_server, operator, approver_key
):
    run_id, token = create_run(operator)
    transport = CountingTransport()
    client = GateClient(
        fluidbox_server.url,
        run_id,
        token,
        retries=2000,  # ~8 min of retries: a restart on a busy machine is slow
        backoff=0.05,
        max_backoff=0.25,
        transport=transport,
    )
    answer = {}

    def agent_waits() -> None:
        answer["decision"] = client.ask(
            "s-1", "c-1", "send_email", {"to": "bob@example.com"}, wait_seconds=15
        )  # no total_wait: it waits until someone decides

    waiting = threading.Thread(target=agent_waits, daemon=True)
    waiting.start()
    wait_until(lambda: Approval.objects.filter(run_id=run_id).exists(), "the approval row")

    fluidbox_server.stop(signal.SIGKILL)  # the parked long-poll dies with the server
    wait_until(lambda: transport.failures >= 2, "the client to retry against the dead server")
    sent_before_restart = transport.sent
    fluidbox_server.start()
    wait_until(
        lambda: transport.sent > sent_before_restart and transport.in_flight == 1,
        "the client to be waiting on the restarted server",
    )
    approval = Approval.objects.get(run_id=run_id)
    assert decide(fluidbox_server.url, approver_key, str(approval.pk)).status_code == 200
    waiting.join()
    client.close()

    decision = answer["decision"]
    assert decision.allowed and decision.source == "approval"
    assert transport.failures >= 2
    assert Approval.objects.filter(run_id=run_id).count() == 1
    assert ToolCall.objects.filter(run_id=run_id).count() == 1
    types = list(Event.objects.filter(run_id=run_id).values_list("type", flat=True))
    assert types.count("tool.requested") == 1
    assert types.count("approval.requested") == 1
    assert types.count("approval.decided") == 1
    assert types.count("tool.decision") == 1
    assert chain_verify(run_id) == []
