"""Threads that do the MCP endpoint's quick database work and keep their connection between
jobs.

A `tools/call` reaches the database from a thread of the MCP event loop, not from the request
thread (which closed its connection so that a call waiting for a human holds none). Opening a
fresh connection for each call costs PostgreSQL a backend start-up, several milliseconds of
CPU, paid a second time per request after the token check. These threads keep theirs while
they are in use and close it when idle for `IDLE_SECONDS` (then the thread ends) or on any
sign of trouble. Waiting for a human never runs here (see `server.py`).

With psycopg's pool (`DB_POOL_SIZE`) a connection is returned to the pool after each job, as
before: holding pooled connections in idle threads would starve the request threads.
"""

import concurrent.futures
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import close_old_connections, connections

IDLE_SECONDS = 30.0


def pooled() -> bool:
    """Whether connections come from psycopg's pool (`DB_POOL_SIZE`)."""
    return any(
        connections[alias].settings_dict.get("OPTIONS", {}).get("pool") for alias in connections
    )


class DatabaseThreads:
    """At most `size` threads; a job waits for a free one past that."""

    def __init__(self, size: int, name: str) -> None:
        self._size = size
        self._name = name
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    def submit(self, job: Callable[[], Any]) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._jobs.put((job, future))
        with self._lock:
            if self._idle == 0 and self._threads < self._size:
                self._threads += 1
                threading.Thread(target=self._work, name=self._name, daemon=True).start()
        return future

    def _work(self) -> None:
        keep = not pooled()
        try:
            while True:
                with self._lock:
                    self._idle += 1
                try:
                    job, future = self._jobs.get(timeout=IDLE_SECONDS)
                except queue.Empty:
                    return
                finally:
                    with self._lock:
                        self._idle -= 1
                if not future.set_running_or_notify_cancel():
                    continue
                # A connection that failed or outlived its age goes; a healthy one is reused.
                close_old_connections()
                try:
                    future.set_result(job())
                except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                    future.set_exception(exc)
                finally:
                    if keep:
                        _keep_for_next_job()
                    else:
                        close_old_connections()
        finally:
            with self._lock:
                self._threads -= 1
            connections.close_all()


def _keep_for_next_job() -> None:
    for connection in connections.all(initialized_only=True):
        if connection.connection is None:
            continue
        if connection.in_atomic_block or connection.errors_occurred:
            connection.close()
            continue
        # Django closes a connection past `close_at` (CONN_MAX_AGE, 0 by default: at once);
        # this thread's stays open while the thread is in use.
        connection.close_at = time.monotonic() + IDLE_SECONDS
