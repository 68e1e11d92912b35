"""One organization's slow upstream, attacked from its side: its calls through `/v1/mcp` hold
threads for as long as the upstream takes to answer. They hold threads of the calls' own
pool, never the quick work's (token checks, listings), so another organization's agent is
still answered while they wait (the quick pool had run both: a `tools/list` took 14 s); and
all of one organization's brokered calls in flight share a cap, so its slow upstream cannot
hold the threads another organization's calls need."""

import json
import threading

import httpx
import pytest

from governance.models import ToolCall
from governance.services.policies import policy_save
from tests.conftest import run_body, run_over_http
from tests.governance.broker.support import BROKER_POLICY, connect
from tests.support.servers import WebServer
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

ACCEPT = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


@pytest.fixture
def live(transactional_db, tmp_path):
    with WebServer(
        tmp_path,
        workers=1,
        threads=8,
        FLUIDBOX_MCP_QUICK_THREADS="2",
        FLUIDBOX_MCP_CALL_THREADS="2",
        # The held calls wait on the test, not on the broker's 20 s (a busy machine took
        # longer than that to reach the listing, and a held call came back timed out).
        FLUIDBOX_MCP_TIMEOUT="240",
    ) as server:
        yield server


def mcp(server, token: str, body: dict, timeout: float = 60) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", **ACCEPT}
    return httpx.post(f"{server.url}/v1/mcp", json=body, headers=headers, timeout=timeout)


def test_calls_held_by_a_slow_upstream_leave_other_organizations_answered(
    live, org, other_org, operator, echo_server, tmp_path
):
    policy_save(org=org, text=BROKER_POLICY, author=None)  # crm.lookup: ALWAYS
    connect(operator, echo_server)
    slow = operator.post("/v1/runs", run_body(bundles=[], connections=["crm"])).json()
    release = tmp_path / "release"
    answers: list[httpx.Response] = []

    def held_call(n: int) -> None:
        arguments = {"id": str(n), "hold_until_file": str(release)}
        body = {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "crm__lookup", "arguments": arguments},
        }
        answers.append(mcp(live, slow["session_token"], body, timeout=120))

    threads = [threading.Thread(target=held_call, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    try:
        # Both calls reached the upstream, which holds them: every call thread is taken.
        wait_until(lambda: len(echo_server.calls()) == 2, "the two calls to reach the upstream")

        _, theirs = run_over_http(live.url, other_org)
        listing = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}
        listed = httpx.post(
            f"{live.url}/v1/mcp", json=listing, headers={**theirs, **ACCEPT}, timeout=30
        )

        assert listed.status_code == 200, listed.text
        assert "result" in listed.json()
        assert not release.exists() and answers == []  # the slow calls are still held
    finally:
        release.touch()
        for thread in threads:
            thread.join(timeout=120)
    assert [json.loads(a.text)["result"]["isError"] for a in answers] == [False, False]


@pytest.fixture
def live_with_an_org_share(transactional_db, tmp_path):
    with WebServer(
        tmp_path,
        workers=1,
        threads=8,
        FLUIDBOX_BROKERED_CALLS_PER_ORG="2",
        FLUIDBOX_MCP_TIMEOUT="240",  # held until the test releases them (see `live`)
    ) as server:
        yield server


def test_one_organizations_held_calls_leave_its_share_to_the_others(
    live_with_an_org_share, org, other_org, operator, other_operator, echo_server, tmp_path
):
    """Each run a person starts has a token of its own, so a cap per run alone bounds nothing:
    past its share of calls in flight, an organization's next call is refused at once (before
    the gate, nothing recorded), and another organization's call still runs."""
    live = live_with_an_org_share
    for organization, api in ((org, operator), (other_org, other_operator)):
        policy_save(org=organization, text=BROKER_POLICY, author=None)  # crm.lookup: ALWAYS
        connect(api, echo_server)
    runs = [operator.post("/v1/runs", run_body(bundles=[], connections=["crm"])).json()]
    runs += [operator.post("/v1/runs", run_body(bundles=[], connections=["crm"])).json()]
    release = tmp_path / "release"
    answers: list[httpx.Response] = []

    def call(run: dict, call_id: str, arguments: dict) -> httpx.Response:
        return httpx.post(
            f"{live.url}/v1/runs/{run['id']}/tools/crm.lookup/call",
            json={"session_id": "s-1", "tool_call_id": call_id, "arguments": arguments},
            headers={"Authorization": f"Bearer {run['session_token']}"},
            timeout=120,
        )

    held = {"id": "1", "hold_until_file": str(release)}
    threads = [
        threading.Thread(target=lambda r=run, n=n: answers.append(call(r, f"held-{n}", held)))
        for n, run in enumerate(runs)
    ]
    for thread in threads:
        thread.start()
    try:
        wait_until(lambda: len(echo_server.calls()) == 2, "the two calls to reach the upstream")
        third = operator.post("/v1/runs", run_body(bundles=[], connections=["crm"])).json()
        refused = call(third, "over-the-share", {"id": "2"})
        assert refused.status_code == 429, refused.text
        assert "FLUIDBOX_BROKERED_CALLS_PER_ORG" in refused.json()["detail"]
        assert not ToolCall.objects.filter(tool_call_id="over-the-share").exists()

        theirs = other_operator.post("/v1/runs", run_body(bundles=[], connections=["crm"]))
        served = call(theirs.json(), "theirs", {"id": "3"})
        assert served.status_code == 200, served.text
        assert served.json()["result"]["isError"] is False
    finally:
        release.touch()
        for thread in threads:
            thread.join(timeout=120)
    assert sorted(a.status_code for a in answers) == [200, 200]
