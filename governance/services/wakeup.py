"""Waking parked gate calls when an approval is decided, across processes.

On PostgreSQL one listener thread per process holds `LISTEN fluidbox_approvals`; deciders
`NOTIFY` inside their transaction, so the wake-up is delivered exactly at commit. On
SQLite (one machine) a poller thread per process re-reads every 200 ms which of its
waiters' approvals are settled, in one query for all of them (on PostgreSQL it does the
same every `FLUIDBOX_WAKE_RECHECK_SECONDS`, in case a `NOTIFY` was lost with the listener's
connection). Either way the row stays the truth: a wake-up only tells a waiter to look again.

One query per process rather than one per waiter: 200 waiters re-reading on their own cost
a SQLite server more than a core (a connection opened and closed five times a second each),
and the writers they starved waited past SQLite's lock timeout.
"""

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable

from django.conf import settings
from django.db import connection, transaction

logger = logging.getLogger(__name__)

CHANNEL = "fluidbox_approvals"
SQLITE_POLL_SECONDS = 0.2


def _is_postgres() -> bool:
    return connection.vendor == "postgresql"


class _Wakeups:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[int, set[threading.Event]] = defaultdict(set)
        self._listener: threading.Thread | None = None
        self._listening = threading.Event()
        self._poller: threading.Thread | None = None

    def _register(self, approval_id: int) -> threading.Event:
        event = threading.Event()
        with self._lock:
            self._waiters[approval_id].add(event)
            # Under the same lock as the poller's decision to stop when nobody waits.
            if self._poller is None:
                self._poller = threading.Thread(
                    target=self._poll, name="fluidbox-approval-poller", daemon=True
                )
                self._poller.start()
        return event

    def _unregister(self, approval_id: int, event: threading.Event) -> None:
        with self._lock:
            waiters = self._waiters.get(approval_id)
            if waiters is not None:
                waiters.discard(event)
                if not waiters:
                    del self._waiters[approval_id]

    def wake(self, approval_id: int) -> None:
        with self._lock:
            events = list(self._waiters.get(approval_id, ()))
        for event in events:
            event.set()

    def wake_all(self) -> None:
        with self._lock:
            events = [event for waiters in self._waiters.values() for event in waiters]
        for event in events:
            event.set()

    def _ensure_listener(self) -> None:
        with self._lock:
            if self._listener is not None and self._listener.is_alive():
                return
            params = connection.get_connection_params()
            self._listener = threading.Thread(
                target=self._listen, args=(params,), name="fluidbox-approval-listener", daemon=True
            )
            self._listener.start()
        self._listening.wait(timeout=2)

    def _listen(self, params: dict) -> None:
        import psycopg

        params = {k: v for k, v in params.items() if k not in ("cursor_factory", "context")}
        while True:
            try:
                with psycopg.connect(**params, autocommit=True) as listener:
                    listener.execute(f"LISTEN {CHANNEL}")
                    self._listening.set()
                    # Anything decided while we were not listening: make waiters look again.
                    self.wake_all()
                    for note in listener.notifies(timeout=None):
                        try:
                            self.wake(int(note.payload))
                        except ValueError:
                            continue
            except Exception:  # the listener must outlive database restarts
                logger.warning("approval listener lost its connection; reconnecting", exc_info=True)
                self._listening.clear()
                time.sleep(1)

    def _poll(self) -> None:
        interval = settings.FLUIDBOX_WAKE_RECHECK_SECONDS if _is_postgres() else SQLITE_POLL_SECONDS
        while True:
            time.sleep(interval)
            with self._lock:
                awaited = list(self._waiters)
                if not awaited:
                    self._poller = None
                    return
            try:
                for approval_id in _settled_among(awaited):
                    self.wake(approval_id)
            except Exception:  # a failed read is retried at the next tick
                logger.warning("approval poller could not read approvals", exc_info=True)
            finally:
                connection.close()

    def wait(self, approval_id: int, timeout: float, is_settled: Callable[[], bool]) -> None:
        """Park until the approval may have changed or `timeout` passes.

        The caller's database connection is closed first so a parked call holds a thread
        but no database connection.
        """
        if _is_postgres():
            self._ensure_listener()
        event = self._register(approval_id)
        try:
            if is_settled():
                return
            if not connection.in_atomic_block:
                connection.close()
            deadline = time.monotonic() + timeout
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not event.wait(remaining):
                    return
                # A wake-up means "look again", not "settled": the listener wakes every
                # waiter when it (re)connects, and returning then would end a long-poll
                # early with nothing decided.
                event.clear()
                settled = is_settled()
                connection.close()
                if settled:
                    return
        finally:
            self._unregister(approval_id, event)


def _settled_among(approval_ids: list[int]) -> set[int]:
    """Those no longer pending (decided, timed out, or gone with their run)."""
    from governance.models import Approval, ApprovalStatus

    pending = Approval.objects.filter(pk__in=approval_ids, status=ApprovalStatus.PENDING)
    return set(approval_ids) - set(pending.values_list("pk", flat=True))


wakeups = _Wakeups()


def announce_decision(approval_id: int) -> None:
    """Call inside the deciding transaction: wakes every process's waiters at commit."""
    if _is_postgres():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, str(approval_id)])
    transaction.on_commit(lambda: wakeups.wake(approval_id))
