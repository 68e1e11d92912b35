"""One token cannot hold every thread: approval waits and event streams are capped per
credential, across web processes, against a real gunicorn with few threads.

The attack: a run token opens many long-polls (or streams) at once so that every web thread
is parked and nobody else is answered. With `FLUIDBOX_WAITS_PER_CREDENTIAL=2` on 2 × 4
threads, two park, the rest get 429 with Retry-After at once, and other credentials are
still answered while those two wait.
"""

import threading
import time

import httpx
import pytest

from governance.models import Approval, ToolCall, WaitSlot
from governance.services.orgs import api_key_create
from tests.conftest import run_body, run_over_http
from tests.support.servers import WebServer

pytestmark = pytest.mark.slow

CAP = 2


@pytest.fixture
def live(transactional_db, tmp_path):
    with WebServer(
        tmp_path, workers=2, threads=4, FLUIDBOX_WAITS_PER_CREDENTIAL=str(CAP)
    ) as server:
        yield server


def new_run(operator) -> tuple[str, dict]:
    response = operator.post("/v1/runs", run_body())
    assert response.status_code == 201, response.content
    return response.json()["id"], {"Authorization": f"Bearer {response.json()['session_token']}"}


def ask(server, run_id, headers, call_id, *, wait):
    body = {
        "session_id": "s-1",
        "tool_call_id": call_id,
        "tool": "send_email",  # ASK in the test policy: a supervised run pauses
        "arguments": {"to": f"{call_id}@example.com"},
        "wait_seconds": wait,
    }
    for attempt in range(5):
        try:
            return httpx.post(
                f"{server.url}/v1/runs/{run_id}/permission", json=body, headers=headers, timeout=90
            )
        except httpx.TransportError:
            # As the runner's client does: the same ids again re-attach to the same call.
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def until(condition, what: str, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_one_tokens_extra_waits_get_429_and_others_are_still_answered(
    live, org, operator, operator_key, approver
):
    run_id, token = new_run(operator)
    responses: dict[str, httpx.Response] = {}
    barrier = threading.Barrier(6)

    def wait_for(call_id):
        barrier.wait()
        responses[call_id] = ask(live, run_id, token, call_id, wait=30)

    threads = [threading.Thread(target=wait_for, args=(f"c-{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    until(lambda: len(responses) >= 4, "the waits over the cap to be refused")
    refused = {call_id: r for call_id, r in responses.items()}
    assert len(refused) == 4
    for response in refused.values():
        assert response.status_code == 429, response.text
        assert response.json()["error"] == "too_many_waits"
        assert "FLUIDBOX_WAITS_PER_CREDENTIAL" in response.json()["detail"]
        assert 1 <= int(response.headers["Retry-After"]) <= 10
    parked = [t for t in threads if t.is_alive()]
    assert len(parked) == CAP
    # The cap is counted in the database, across both worker processes.
    assert WaitSlot.objects.filter(credential=f"run:{run_id}").count() == CAP

    # Other credentials are answered while those two are parked: the operator key, and
    # another run's token, which may park a wait of its own.
    detail = httpx.get(
        f"{live.url}/v1/runs/{run_id}",
        headers={"Authorization": f"Bearer {operator_key}"},
        timeout=60,
    )
    assert detail.status_code == 200
    other_run, other_token = new_run(operator)
    other = ask(live, other_run, other_token, "o-1", wait=1)
    assert (other.status_code, other.json()["decision"]) == (200, "pending")
    # The same token's event stream counts against the same cap.
    stream = httpx.get(f"{live.url}/v1/runs/{run_id}/events/stream", headers=token, timeout=60)
    assert stream.status_code == 429
    assert len([t for t in threads if t.is_alive()]) == CAP  # still parked all along

    # A decision wakes the parked two; their slots are released.
    key = api_key_create(org=org, user=approver, name="alice").plaintext
    parked_ids = sorted(set(f"c-{i}" for i in range(6)) - set(refused))
    for call_id in parked_ids:
        approval = Approval.objects.get(run_id=run_id, tool_call_id=call_id)
        decided = httpx.post(
            f"{live.url}/v1/approvals/{approval.pk}/decision",
            json={"decision": "approve"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )
        assert decided.status_code == 200
    for thread in threads:
        thread.join(timeout=90)
    assert [responses[c].json()["decision"] for c in parked_ids] == ["allow", "allow"]
    assert not WaitSlot.objects.filter(credential=f"run:{run_id}").exists()

    # A refused wait left its call recorded, once: the retry re-attaches to its approval.
    retried = ask(live, run_id, token, sorted(refused)[0], wait=0)
    assert (retried.status_code, retried.json()["decision"]) == (200, "pending")
    assert ToolCall.objects.filter(run_id=run_id).count() == 6
    assert Approval.objects.filter(run_id=run_id).count() == 6


def test_one_tokens_extra_event_streams_get_429_until_one_closes(live, operator, operator_key):
    run_id, token = new_run(operator)
    url = f"{live.url}/v1/runs/{run_id}/events/stream"
    with (
        httpx.Client(timeout=60) as first,
        httpx.Client(timeout=60) as second,
        first.stream("GET", url, headers=token) as a,
        second.stream("GET", url, headers=token) as b,
    ):
        assert (a.status_code, b.status_code) == (200, 200)
        third = httpx.get(url, headers=token, timeout=60)
        assert third.status_code == 429
        assert third.json()["error"] == "too_many_waits"
        assert int(third.headers["Retry-After"]) >= 1
        # The operator key is another credential: its stream is served.
        with httpx.stream(
            "GET", url, headers={"Authorization": f"Bearer {operator_key}"}, timeout=60
        ) as operators:
            assert operators.status_code == 200
    # The streams closed; the server notices at its next frame and frees the slots.
    accepted = []

    def a_stream_is_accepted():
        with httpx.stream("GET", f"{url}?max_seconds=1", headers=token, timeout=60) as again:
            accepted.append(again.status_code)
            return again.status_code == 200

    until(a_stream_is_accepted, "a closed stream's slot to be released")
    assert accepted[-1] == 200


def test_a_head_of_the_event_stream_holds_no_slot(live, operator):
    # HEAD answered at once while the server streamed on to nowhere, holding a wait slot for
    # the stream's whole time: the credential's slots filled with no connection kept open.
    run_id, token = new_run(operator)
    url = f"{live.url}/v1/runs/{run_id}/events/stream"

    heads = [httpx.head(url, headers=token, timeout=60) for _ in range(4)]

    assert {head.status_code for head in heads} == {405}
    assert not WaitSlot.objects.exists()
    with httpx.stream("GET", f"{url}?max_seconds=1", headers=token, timeout=60) as stream:
        assert stream.status_code == 200
        assert WaitSlot.objects.exists()  # a GET holds one while it streams


@pytest.fixture
def live_with_an_org_cap(transactional_db, tmp_path):
    with WebServer(
        tmp_path,
        workers=2,
        threads=8,
        FLUIDBOX_WAITS_PER_CREDENTIAL="2",
        FLUIDBOX_WAITS_PER_ORG="3",
    ) as server:
        yield server


def test_new_run_tokens_do_not_lift_the_organizations_cap(
    live_with_an_org_cap, org, other_org, operator
):
    """Each run a person starts has a token of its own, so a cap per credential alone bounds
    nothing: the streams of every credential of one organization share its cap, and another
    organization's are served meanwhile."""
    live = live_with_an_org_cap
    runs = [new_run(operator) for _ in range(2)]

    def url(run_id) -> str:
        return f"{live.url}/v1/runs/{run_id}/events/stream"

    other = run_over_http(live.url, other_org)
    with (
        httpx.Client(timeout=60) as c1,
        httpx.Client(timeout=60) as c2,
        httpx.Client(timeout=60) as c3,
        httpx.Client(timeout=60) as c4,
        # Two streams of the first run (its credential's cap), one of the second.
        c1.stream("GET", url(runs[0][0]), headers=runs[0][1]) as s1,
        c2.stream("GET", url(runs[0][0]), headers=runs[0][1]) as s2,
        c3.stream("GET", url(runs[1][0]), headers=runs[1][1]) as s3,
    ):
        assert (s1.status_code, s2.status_code, s3.status_code) == (200, 200, 200)
        fourth = httpx.get(url(runs[1][0]), headers=runs[1][1], timeout=60)
        assert fourth.status_code == 429
        assert "FLUIDBOX_WAITS_PER_ORG" in fourth.json()["detail"]
        assert 1 <= int(fourth.headers["Retry-After"]) <= 10
        assert WaitSlot.objects.filter(credential=f"org:{org.pk}").count() == 3
        # Another organization's run is served while this one is at its cap.
        with c4.stream("GET", url(other[0]), headers=other[1]) as theirs:
            assert theirs.status_code == 200
