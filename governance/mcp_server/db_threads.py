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
    """At most `size` threads; a job waits for a free one past that.

    A job is never left waiting behind another while the pool has room: a thread is started
    whenever the jobs not yet taken outnumber the threads waiting for one. (Counting a thread
    as free from the moment it began to wait let two calls arriving together share one
    thread: the second waited for the first, held by a slow upstream, to end.)"""

    def __init__(self, size: int, name: str) -> None:
        self._size = size
        self._name = name
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._waiting = 0  # threads waiting for a job
        self._untaken = 0  # jobs submitted that no thread has taken yet

    def submit(self, job: Callable[[], Any]) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            self._untaken += 1
            self._jobs.put((job, future))
            if self._untaken > self._waiting and self._threads < self._size:
                self._threads += 1
                threading.Thread(target=self._work, name=self._name, daemon=True).start()
        return future

    def _next_job(self) -> tuple[Callable[[], Any], concurrent.futures.Future] | None:
        """The next job, or None once this thread has waited `IDLE_SECONDS` for one and may
        end (it stays while a job it was counted on for is on its way)."""
        while True:
            with self._lock:
                self._waiting += 1
            try:
                taken = self._jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    self._waiting -= 1
                    if self._untaken <= self._waiting:
                        self._threads -= 1
                        return None
                continue
            with self._lock:
                self._waiting -= 1
                self._untaken -= 1
            return taken

    def _work(self) -> None:
        keep = not pooled()
        ended_idle = False
        try:
            while (taken := self._next_job()) is not None:
                job, future = taken
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
            ended_idle = True  # `_next_job` counted this thread out
        finally:
            if not ended_idle:
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
