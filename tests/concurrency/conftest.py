"""Live servers for concurrency tests: gunicorn with two worker processes sharing the test
database (PostgreSQL, or the SQLite file by `DATABASE_URL=sqlite:///…`)."""

import threading

import httpx
import pytest

from tests.support.servers import WebServer


@pytest.fixture
def web_server(transactional_db, tmp_path):
    with WebServer(tmp_path, workers=2, threads=48) as server:
        yield server


@pytest.fixture
def unlocked_web_server(transactional_db, tmp_path):
    with WebServer(tmp_path, workers=2, threads=48, FLUIDBOX_UNSAFE_SKIP_BUDGET_LOCK="1") as server:
        yield server


def fire_at_once(count: int, request) -> list[httpx.Response]:
    """Send `count` requests from `count` threads released by one barrier."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def worker(index: int) -> None:
        with httpx.Client(timeout=60) as client:
            barrier.wait()
            results[index] = request(client, index)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
