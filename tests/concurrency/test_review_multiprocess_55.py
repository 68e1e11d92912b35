"""Review 55 (h14): approvals and `POST /v1/mcp` when fluidbox runs as several web processes
on one SQLite file (WAL, IMMEDIATE), the embedded default.

"Worker A" and "worker B" are two gunicorn servers on the same database file rather than two
workers behind one socket: a request then lands in the process the test chooses, which one
server with `--workers 2` cannot promise. Every wait below is on a condition (a wait slot
row, an approval's expiry having passed), never a fixed sleep; "promptly" is checked as an
order (back well before the only other thing that could end the wait: its 120 s bound).
"""

import sqlite3
import threading
import time

import httpx
import pytest

from governance.models import Approval, ToolCall, WaitSlot
from governance.services.settlement import RUN_FINISHED_REASON
from ledger.chain_checks import chain_verify
from ledger.models import Event
from tests.mcp_endpoint.conftest import with_client
from tests.runner_live import conftest as live
from tests.runner_live.conftest import create_run, decide
from tests.support.servers import WebServer, Worker
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.sqlite]

ERA = "2026-07-28"

# The live tracker and an approver's key, as the MCP endpoint's own tests have them.
demo_org = live.demo_org
approver_key = live.approver_key


@pytest.fixture
def two_processes(transactional_db, tmp_path):
    # An MCP call waits its whole bound (120 s) in one piece, with no progress beat that
    # would look at the row again: only a wake-up brings it back before that.
    slow_beat = {"FLUIDBOX_MCP_PROGRESS_SECONDS": "120"}
    a = WebServer(tmp_path, workers=1, threads=16, **slow_beat)
    b = WebServer(tmp_path, workers=1, threads=16, **slow_beat)
    with a, b:
        yield a, b


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


def types(run_id) -> list[str]:
    return list(Event.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True))


def brokered(run_id, tool_call_id) -> list[Event]:
    events = Event.objects.filter(run_id=run_id, type="tool.brokered")
    return [e for e in events if e.data["tool_call_id"] == tool_call_id]


def parked(run_id) -> int:
    return WaitSlot.objects.filter(credential=f"run:{run_id}").count()


def in_thread(work) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run():
        try:
            out["value"] = work()
        except BaseException as error:  # reported by the test
            out["error"] = error
        out["returned_at"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def issue_count(url, token) -> int:
    result = with_client(url, token, ERA, lambda c: c.call_tool("tracker__list_issues", {}))
    return len(result.structured_content["result"])


@pytest.mark.parametrize("together", [False, True], ids=["while-waiting", "at-once"])
def test_a_retry_in_the_other_process_reattaches_and_the_upstream_runs_once(
    two_processes,
    demo_org,
    operator,
    approver_key,
    together,
):
    # The agent's `tools/call` waits on an ASK in process A; its retry (same `_meta` id)
    # lands in process B while the first still waits; the approval is given through B.
    # Both waiters wake promptly (not at the end of their 120 s bound), exactly one of them
    # gets the upstream's result, the other says the call already ran; one record, one
    # approval, one upstream call.
    a, b = two_processes
    run_id, token = create_run(operator, connections=["tracker"])
    before = issue_count(a.url, token)

    def create(url):
        return lambda: with_client(
            url,
            token,
            ERA,
            lambda c: c.call_tool(
                "tracker__create_issue",
                {"title": "across processes, once"},
                meta={"claudecode/toolUseId": "toolu_cross"},
            ),
        )

    if together:
        # Both sent at once: they race to record the call, the loser re-attaches.
        barrier = threading.Barrier(2)
        first, first_out = in_thread(lambda: barrier.wait() and None or create(a.url)())
        retry, retry_out = in_thread(lambda: barrier.wait() and None or create(b.url)())
        wait_until(lambda: parked(run_id) == 2, "both calls to wait")
    else:
        first, first_out = in_thread(create(a.url))
        wait_until(lambda: parked(run_id) == 1, "the first call to wait in process A")
        retry, retry_out = in_thread(create(b.url))
        wait_until(lambda: parked(run_id) == 2, "the retry to wait in process B")
    approval = Approval.objects.get(run_id=run_id)
    decided_at = time.monotonic()
    assert decide(b.url, approver_key, str(approval.pk)).status_code == 200
    first.join(180)
    retry.join(180)
    results = [first_out.get("value"), retry_out.get("value")]
    assert None not in results, (first_out, retry_out)
    for out in (first_out, retry_out):
        assert out["returned_at"] - decided_at < 60, "a waiter slept through the decision"
    ran = [r for r in results if not r.is_error]
    told = [r for r in results if r.is_error]
    assert len(ran) == 1 and len(told) == 1, [text_of(r) for r in results]
    assert "already ran once" in text_of(told[0])
    assert issue_count(a.url, token) == before + 1
    assert ToolCall.objects.filter(run_id=run_id, tool_call_id="toolu_cross").count() == 1
    assert Approval.objects.filter(run_id=run_id).count() == 1
    seen = types(run_id)
    assert seen.count("approval.requested") == 1
    assert seen.count("approval.decided") == 1
    assert len(brokered(run_id, "toolu_cross")) == 1
    assert chain_verify(run_id) == []


def test_a_run_finished_in_one_process_ends_the_waits_in_others_and_nothing_runs(
    two_processes,
    demo_org,
    operator,
    approver_key,
):
    # An MCP call waits on an ASK in process A, a REST brokered call long-polls another ASK
    # in process B; the operator finishes the run (a third process, the test's). Both waiters
    # end promptly with a readable answer saying so, and no upstream call happens after.
    a, b = two_processes
    run_id, token = create_run(operator, connections=["tracker"])
    before = issue_count(a.url, token)

    mcp, mcp_out = in_thread(
        lambda: with_client(
            a.url,
            token,
            ERA,
            lambda c: c.call_tool(
                "tracker__create_issue",
                {"title": "never"},
                meta={"claudecode/toolUseId": "toolu_finish"},
            ),
        )
    )
    wait_until(lambda: parked(run_id) == 1, "the MCP call to wait in process A")
    rest, rest_out = in_thread(
        lambda: httpx.post(
            f"{b.url}/v1/runs/{run_id}/tools/tracker.create_issue/call",
            json={
                "session_id": "s-1",
                "tool_call_id": "rest-finish",
                "arguments": {"title": "never either"},
                "wait_seconds": 30,
            },
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
    )
    wait_until(lambda: parked(run_id) == 2, "the REST call to wait in process B")
    finished_at = time.monotonic()
    assert operator.post(f"/v1/runs/{run_id}/finish").status_code == 200
    mcp.join(180)
    rest.join(180)
    result = mcp_out.get("value")
    response = rest_out.get("value")
    assert result is not None and response is not None, (mcp_out, rest_out)
    assert mcp_out["returned_at"] - finished_at < 60
    assert rest_out["returned_at"] - finished_at < 15
    assert result.is_error and "finish" in text_of(result), text_of(result)
    if response.status_code == 200:
        body = response.json()
        assert (body["decision"], body["reason"]) == ("deny", RUN_FINISHED_REASON), body
    else:
        assert response.status_code == 409 and "finished" in response.text, response.text
    assert brokered(run_id, "toolu_finish") == brokered(run_id, "rest-finish") == []
    ids = ["toolu_finish", "rest-finish"]
    waited = ToolCall.objects.filter(run_id=run_id, tool_call_id__in=ids)
    assert waited.count() == 2
    assert not waited.exclude(broker_status="").exists()
    assert set(Approval.objects.filter(run_id=run_id).values_list("status", flat=True)) == {
        "denied"
    }
    # The tracker itself saw no new issue (read through a fresh run: the finished run's
    # token is refused).
    _, other_token = create_run(operator, connections=["tracker"])
    assert issue_count(a.url, other_token) == before
    assert chain_verify(run_id) == []


def test_a_decision_queued_behind_expiry_is_refused_and_one_settlement_is_recorded(
    two_processes, transactional_db, operator, org, approver, tmp_path
):
    # The approval expires while a decision through process B, the waiting call's own
    # expiry in process A and the worker's timeout task all queue for SQLite's write lock
    # (held here by the test, as a long write would hold it). Released after expiry: the
    # decision is refused (409 expired, never granted), the waiter answers "approval timed
    # out", and the ledger has one settlement.
    from django.db import connection
    from django.utils import timezone

    from governance.services.orgs import api_key_create
    from governance.services.policies import policy_save

    a, b = two_processes
    policy_save(
        org=org,
        text='name: default\napproval_timeout: 3\nrules:\n  - {pattern: "send_email:*", '
        "action: ASK}\n",
        author=None,
    )
    worker = Worker(tmp_path)
    worker.start()
    try:
        worker.wait_until_ready()
        run_id, token = create_run(operator)
        key = api_key_create(org=org, user=approver, name="decider").plaintext
        gate = {
            "session_id": "s-1",
            "tool_call_id": "c-expiry",
            "tool": "send_email",
            "arguments": {"to": "bob@example.com"},
        }
        headers = {"Authorization": f"Bearer {token}"}
        first = httpx.post(f"{a.url}/v1/runs/{run_id}/permission", json=gate, headers=headers)
        assert first.json()["decision"] == "pending", first.text
        approval = Approval.objects.get(run_id=run_id)
        waiter, waiter_out = in_thread(
            lambda: httpx.post(
                f"{a.url}/v1/runs/{run_id}/permission",
                json={**gate, "wait_seconds": 30},
                headers=headers,
                timeout=120,
            )
        )
        wait_until(lambda: parked(run_id) == 1, "the call to wait in process A")
        holder = sqlite3.connect(connection.settings_dict["NAME"], timeout=30)
        holder.isolation_level = None
        holder.execute("BEGIN IMMEDIATE")
        try:
            decider, decider_out = in_thread(
                lambda: httpx.post(
                    f"{b.url}/v1/approvals/{approval.pk}/decision",
                    json={"decision": "approve"},
                    headers={"Authorization": f"Bearer {key}"},
                    timeout=120,
                )
            )
            wait_until(lambda: timezone.now() > approval.expires_at, "the approval to expire")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        decider.join(120)
        waiter.join(120)
        decision = decider_out["value"]
        answer = waiter_out["value"].json()
        assert decision.status_code == 409 and decision.json()["error"] == "expired", decision.text
        assert (answer["decision"], answer["reason"]) == ("deny", "approval timed out"), answer
        assert Approval.objects.get(pk=approval.pk).status == "timed_out"
        decided = Event.objects.filter(run_id=run_id, type="approval.decided")
        assert [e.data["outcome"] for e in decided] == ["timed_out"]
        assert types(run_id).count("tool.decision") == 1
        assert chain_verify(run_id) == []
    finally:
        worker.stop()
