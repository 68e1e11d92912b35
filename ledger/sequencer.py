"""The sequencer: gives committed ledger events their leaves, off the gate's hot path.

The gate's transaction appends events with a per-run lock and nothing org-wide; this
integrator (run by the worker, like Trillian's or Tessera's sequencer) later assigns each
organization's new events the next leaf indexes, in event id order, and writes the tree.

Which events are new? Those with no leaf yet, above a watermark below which every event
that will ever commit has one. Event ids are handed out when a row is inserted, not when
it commits, so an event with a small id can commit after one with a bigger id: the
watermark moves only past ids that can no longer appear.

- PostgreSQL: every transaction that appends an event writes the run's counter first, so it
  holds a transaction id before it takes an event id. If a snapshot saw the largest event
  id M and had xmax X, any event with id ≤ M belongs to a transaction older than X; once
  the oldest running transaction is ≥ X (`pg_snapshot_xmin`), all of them have ended, and
  every event ≤ M is either visible or never will be. The watermark then moves to M.
- SQLite: writers are serialized (BEGIN IMMEDIATE), and the sequencer's own transaction is
  one of them, so every event it can see is final.

Per run the order is the chain's order: an event's run counter lock is held until commit,
so seq k+1 never becomes visible before seq k, and it has the larger id. A scan that is
already past seq k's id when it commits could still meet seq k+1 first, so each run's last
sequenced seq is kept (`SequencedRun`) and an event whose predecessor has no leaf yet waits
for the next sweep.
"""

import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from ledger.log_models import LogLeaf, OrgLog, SequencedRun, SequencerState
from ledger.models import Event
from ledger.tree import leaves_append
from ledger.verify.events import event_leaf_hash

BATCH = 5000
# Leaves per pass: a backlog (say, the events of an upgraded deployment) drains over
# several passes, each well inside the worker's task timeout.
PASS_LIMIT = 20000
# How often a round also sweeps from the watermark while it cannot move (a long transaction
# somewhere in the cluster holds the oldest running transaction id back).
SWEEP_EVERY = timedelta(seconds=15)


@dataclass
class Sequenced:
    leaves: int
    logs: dict[int, int]  # log id -> new size


def origin_for(org) -> str:
    prefix = settings.FLUIDBOX_LEDGER_ORIGIN_PREFIX.rstrip("/")
    return f"{prefix}/{org.slug}"


def log_for_org(org) -> OrgLog:
    log = OrgLog.objects.filter(org=org).first()
    if log is not None:
        return log
    with transaction.atomic():
        log, _ = OrgLog.objects.get_or_create(org=org, defaults={"origin": origin_for(org)})
    return log


def _snapshot_xmin(cursor) -> int:
    cursor.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
    return cursor.fetchone()[0]


def _horizon(cursor) -> tuple[int, int]:
    """The largest event id visible now, and the xmax of the same snapshot."""
    cursor.execute(
        f"SELECT COALESCE(MAX(id), 0), pg_snapshot_xmax(pg_current_snapshot())::text::bigint "
        f"FROM {Event._meta.db_table}"
    )
    return cursor.fetchone()


def _candidates(after: int, up_to: int | None = None) -> tuple[int, list]:
    """The next BATCH events after `after` (the last id read, to page on) and those of
    them without a leaf. Two index walks, not an anti-join: PostgreSQL would hash the whole
    events table against the leaves once the log is large."""
    events = Event.objects.filter(pk__gt=after)
    if up_to is not None:
        events = events.filter(pk__lte=up_to)
    rows = list(
        events.order_by("pk").values_list("pk", "hash", "run__org_id", "run_id", "seq")[:BATCH]
    )
    if not rows:
        return after, []
    have = set(
        LogLeaf.objects.filter(event_id__in=[row[0] for row in rows]).values_list(
            "event_id", flat=True
        )
    )
    return rows[-1][0], [row for row in rows if row[0] not in have]


def _in_run_order(batch) -> tuple[list, bool]:
    """The batch's events that directly follow their run's last sequenced seq (or each
    other). An event whose predecessor has no leaf yet waits, with the rest of its run:
    it committed while a scan was already past its predecessor's id."""
    runs = {run_id for _, _, _, run_id, _ in batch}
    heads = dict(SequencedRun.objects.filter(run_id__in=runs).values_list("run_id", "seq"))
    accepted, blocked, deferred = [], set(), False
    for event in batch:
        run_id, seq = event[3], event[4]
        if run_id in blocked or seq != heads.get(run_id, 0) + 1:
            blocked.add(run_id)
            deferred = True
            continue
        heads[run_id] = seq
        accepted.append(event)
    return accepted, deferred


def _heads_save(accepted) -> None:
    last: dict = {}
    for _, _, _, run_id, seq in accepted:
        last[run_id] = seq
    SequencedRun.objects.bulk_create(
        [SequencedRun(run_id=run_id, seq=seq) for run_id, seq in last.items()],
        update_conflicts=True,
        update_fields=["seq"],
        unique_fields=["run"],
    )


def sequence() -> Sequenced | None:
    """One pass: visible events without a leaf get one, each run's in seq order, at most
    PASS_LIMIT of them (a backlog drains over several passes). Returns None when another
    sequencer holds the lock (it is doing the same work)."""
    with transaction.atomic():
        SequencerState.objects.get_or_create(name="ledger")
        try:
            with transaction.atomic():  # a savepoint: a refused lock leaves the rest usable
                state = (
                    SequencerState.objects.select_for_update(nowait=True)
                    .filter(name="ledger")
                    .get()
                )
        except DatabaseError:
            return None
        postgres = connection.vendor == "postgresql"
        ready = False
        if postgres and state.pending_xmax is not None:
            with connection.cursor() as cursor:
                ready = _snapshot_xmin(cursor) >= state.pending_xmax
        now = timezone.now()
        sweep = (
            not postgres or ready or state.swept_at is None or now - state.swept_at >= SWEEP_EVERY
        )
        work = _Pass()
        if sweep and state.cursor > state.watermark:
            # Events that committed after others with bigger ids had their leaves.
            work.scan(after=state.watermark, up_to=state.cursor)
        work.scan(after=max(state.watermark, state.cursor), limit=PASS_LIMIT)
        for log_id, size in work.sizes.items():
            OrgLog.objects.filter(pk=log_id).update(size=size)
        state.cursor = max(state.cursor, work.highest_seen)
        if work.deferred:
            state.swept_at = None  # the next pass sweeps for what waited
        elif sweep:
            state.swept_at = now
        _advance_watermark(state, postgres, ready and sweep and not work.deferred, work)
    return Sequenced(leaves=work.total, logs=work.sizes)


class _Pass:
    """One pass's leaves, across batches and organizations."""

    def __init__(self) -> None:
        self.logs: dict[int, OrgLog] = {}
        self.sizes: dict[int, int] = {}
        self.total = 0
        self.highest_seen = 0
        self.deferred = False
        self.capped = False

    def scan(self, *, after: int, up_to: int | None = None, limit: int | None = None) -> None:
        while True:
            last_read, batch = _candidates(after, up_to)
            accepted, held_back = _in_run_order(batch)
            self.deferred = self.deferred or held_back
            by_org: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
            for event_id, digest, org_id, _, _ in accepted:
                by_org[org_id].append((event_id, event_leaf_hash(digest)))
            for org_id, leaves in by_org.items():
                log = self.logs.get(org_id)
                if log is None:
                    log = _log_locked(org_id)
                    self.logs[org_id] = log
                    self.sizes[log.pk] = log.size
                self.sizes[log.pk] = leaves_append(log.pk, self.sizes[log.pk], leaves)
            if accepted:
                _heads_save(accepted)
            self.total += len(accepted)
            if last_read == after:
                return  # nothing more to read
            after = last_read
            self.highest_seen = max(self.highest_seen, last_read)
            if limit is not None and self.total >= limit:
                self.capped = True
                return


def _log_locked(org_id: int) -> OrgLog:
    from governance.models import Organization

    log = OrgLog.objects.select_for_update().filter(org_id=org_id).first()
    if log is None:
        log_for_org(Organization.objects.get(pk=org_id))
        log = OrgLog.objects.select_for_update().get(org_id=org_id)
    return log


def _advance_watermark(state, postgres: bool, ready: bool, work: _Pass) -> None:
    fields = ["watermark", "cursor", "swept_at", "updated_at"]
    if not postgres:
        # Serialized writers: nothing below what this transaction sees can still commit.
        if not work.deferred:
            state.watermark = max(state.watermark, state.cursor)
        state.save(update_fields=fields)
        return
    if ready:
        # Every event up to the horizon is final, and every visible one up to the cursor
        # has its leaf (this pass swept): nothing up to the smaller of the two is missing.
        state.watermark = max(state.watermark, min(state.pending_max_id, state.cursor))
        state.pending_max_id = state.pending_xmax = None
    if state.pending_xmax is None:
        with connection.cursor() as cursor:
            state.pending_max_id, state.pending_xmax = _horizon(cursor)
    state.save(update_fields=[*fields, "pending_max_id", "pending_xmax"])


def sequence_all() -> int:
    """Passes until one adds nothing (the command line's `checkpoint`, the bench)."""
    total = 0
    while True:
        done = sequence()
        if done is None:
            time.sleep(0.1)  # another sequencer is at it; wait for its pass to end
            continue
        if done.leaves == 0:
            return total
        total += done.leaves


def unsequenced_count() -> int:
    """Events without a leaf (all of them, not only above the watermark): for checks."""
    return Event.objects.filter(leaf__isnull=True).count()


def leaf_of(event) -> LogLeaf | None:
    return LogLeaf.objects.filter(event=event).first()
