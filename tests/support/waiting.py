"""Waiting on a condition, never on the clock: a busy machine only makes tests slower."""

import time
from collections.abc import Callable

# How long a test may wait for something that should happen at once on an idle machine.
# It is a give-up point for a hang, not a promise about speed: passing never depends on it.
PATIENCE_SECONDS = 120.0


def wait_until(condition: Callable[[], bool], what: str, timeout: float = PATIENCE_SECONDS):
    """Poll `condition` until it is true; fail saying `what` never happened."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting ({timeout:.0f} s): {what}")
        time.sleep(0.05)


def wait_until_waiting_on_locks(count: int, what: str) -> None:
    """Until `count` sessions of this PostgreSQL database wait on a lock: a request queued
    behind a row another connection holds."""
    from django.db import connection

    def waiting() -> bool:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            return cursor.fetchone()[0] >= count

    wait_until(waiting, what)
