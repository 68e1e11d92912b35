"""The MCP endpoint's database thread pools (`db_threads.py`): a call held by a slow upstream
occupies one thread and never another call's while the pool has room.

CI once saw two brokered calls arrive together at a pool of two: a thread that had just
started waiting was counted free for both, the second call queued behind the first, and the
first was held by its upstream until the test gave up (test_slow_upstreams.py)."""

import threading

import pytest

from governance.mcp_server import db_threads
from governance.mcp_server.db_threads import DatabaseThreads
from tests.support.waiting import PATIENCE_SECONDS, wait_until

NAME = "fluidbox-test-pool"


@pytest.fixture(autouse=True)
def quick_idle(monkeypatch):
    monkeypatch.setattr(db_threads, "IDLE_SECONDS", 0.2)
    yield
    wait_until(lambda: _pool_threads() == 0, "the idle pool threads to end")


def _pool_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == NAME)


def _held(release: threading.Event, started: threading.Event):
    def job() -> str:
        started.set()
        release.wait(PATIENCE_SECONDS)
        return "held"

    return job


def test_a_job_behind_a_held_one_runs_at_once_while_the_pool_has_room():
    pool = DatabaseThreads(2, NAME)
    # Each round starts with a thread that has just finished a job and waits for the next:
    # the one the second job was left queued behind.
    for _ in range(20):
        assert pool.submit(lambda: "warm").result(timeout=PATIENCE_SECONDS) == "warm"
        release, started = threading.Event(), threading.Event()
        held = pool.submit(_held(release, started))
        second = pool.submit(lambda: "ran")
        try:
            assert second.result(timeout=PATIENCE_SECONDS) == "ran"
            assert not held.done()
        finally:
            release.set()
        assert held.result(timeout=PATIENCE_SECONDS) == "held"


def test_past_its_size_a_job_waits_for_a_thread_and_idle_threads_end():
    pool = DatabaseThreads(2, NAME)
    release = threading.Event()
    starts = [threading.Event(), threading.Event()]
    held = [pool.submit(_held(release, started)) for started in starts]
    for started in starts:
        assert started.wait(PATIENCE_SECONDS)
    third = pool.submit(lambda: "third")
    try:
        assert _pool_threads() == 2
        assert not third.done()  # both threads are held: nothing can have run it
    finally:
        release.set()
    assert third.result(timeout=PATIENCE_SECONDS) == "third"
    assert [future.result(timeout=PATIENCE_SECONDS) for future in held] == ["held", "held"]
    wait_until(lambda: _pool_threads() == 0, "the idle pool threads to end")

    # The pool starts threads again after its idle ones ended.
    assert pool.submit(lambda: "again").result(timeout=PATIENCE_SECONDS) == "again"
