"""One run token cannot hold every web thread through slow brokered calls.

The attack: the run's upstream (a member's own server, say) answers each call after a long
pause, and the run sends many calls at once: each parks a web thread for up to
`FLUIDBOX_MCP_TIMEOUT`, so nobody else is answered. Like approval waits, a run's brokered
calls in flight are capped (`FLUIDBOX_WAITS_PER_CREDENTIAL`); past the cap, 429 at once, the
call not recorded, so the same ids may be sent again.
"""

import threading

import httpx
import pytest

from governance.models import ToolCall
from tests.conftest import run_body
from tests.governance.broker.support import BROKER_POLICY, connect
from tests.support.servers import WebServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

CAP = 2


@pytest.fixture
def live(transactional_db, tmp_path):
    with WebServer(
        tmp_path,
        workers=1,
        threads=4,
        FLUIDBOX_WAITS_PER_CREDENTIAL=str(CAP),
        # The held calls wait on the test, not on the broker's 20 s (see test_slow_upstreams).
        FLUIDBOX_MCP_TIMEOUT="240",
    ) as server:
        yield server


def test_slow_brokered_calls_of_one_run_cannot_hold_every_thread(
    live, org, operator, operator_key, echo_server, tmp_path
):
    from governance.services.policies import policy_save

    policy_save(org=org, text=BROKER_POLICY, author=None)
    connect(operator, echo_server)
    created = operator.post("/v1/runs", run_body(bundles=[], connections=["crm"]))
    run_id, token = created.json()["id"], created.json()["session_token"]
    # The upstream holds each call until the test creates this file: a slow upstream whose
    # calls are in flight for as long as the test needs, not for a pause a busy machine may
    # outlast (a fixed pause and a sleep before the check made this test a race).
    release = tmp_path / "release"
    responses: dict[str, httpx.Response] = {}
    barrier = threading.Barrier(6)

    def slow_call(call_id):
        barrier.wait()
        responses[call_id] = httpx.post(
            f"{live.url}/v1/runs/{run_id}/tools/crm.lookup/call",
            json={
                "session_id": "s-1",
                "tool_call_id": call_id,
                "arguments": {"id": "1", "hold_until_file": str(release)},
            },
            headers={"Authorization": f"Bearer {token}"},
            timeout=240,
        )

    threads = [threading.Thread(target=slow_call, args=(f"c-{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    try:
        # The calls under the cap are held upstream (each holds a web thread); the others
        # were turned away.
        wait_until(
            lambda: (
                len(echo_server.calls()) == CAP
                and sum(r.status_code == 429 for r in list(responses.values())) == 6 - CAP
            ),
            "the calls under the cap to reach the upstream and the others to be refused",
        )
        other = httpx.get(
            f"{live.url}/v1/runs/{run_id}",
            headers={"Authorization": f"Bearer {operator_key}"},
            timeout=120,
        )
        assert other.status_code == 200
        # Answered while the slow calls still hold their threads.
        assert not release.exists() and len(responses) == 6 - CAP
    finally:
        release.touch()
        for thread in threads:
            thread.join(timeout=240)

    statuses = sorted(r.status_code for r in responses.values())
    assert statuses == [200] * CAP + [429] * (6 - CAP), statuses
    refused = [c for c, r in responses.items() if r.status_code == 429]
    assert all("FLUIDBOX_WAITS_PER_CREDENTIAL" in responses[c].json()["detail"] for c in refused)
    # Turned away before the gate: nothing recorded, nothing sent upstream for them.
    assert ToolCall.objects.filter(run_id=run_id).count() == CAP
    assert len(echo_server.calls()) == CAP
