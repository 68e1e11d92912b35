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
so seq k+1 never becomes visible before seq k, and it has the larger id.
"""

from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from ledger.log_models import LogLeaf, OrgLog, SequencerState
from ledger.models import Event
from ledger.tree import leaves_append
from ledger.verify.events import event_leaf_hash

BATCH = 5000


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


def _candidates(after: int) -> list[tuple[int, str, int]]:
    return list(
        Event.objects.filter(pk__gt=after, leaf__isnull=True)
        .order_by("pk")
        .values_list("pk", "hash", "run__org_id")[:BATCH]
    )


def sequence() -> Sequenced | None:
    """One pass: every visible event without a leaf gets one. Returns None when another
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
        watermark_ready = False
        if postgres and state.pending_xmax is not None:
            with connection.cursor() as cursor:
                watermark_ready = _snapshot_xmin(cursor) >= state.pending_xmax
        logs: dict[int, OrgLog] = {}
        sizes: dict[int, int] = {}
        total = 0
        after = state.watermark
        highest_seen = after
        while True:
            batch = _candidates(after)
            by_org: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
            for event_id, digest, org_id in batch:
                by_org[org_id].append((event_id, event_leaf_hash(digest)))
            for org_id, leaves in by_org.items():
                log = logs.get(org_id)
                if log is None:
                    log = _log_locked(org_id)
                    logs[org_id] = log
                    sizes[log.pk] = log.size
                sizes[log.pk] = leaves_append(log.pk, sizes[log.pk], leaves)
            total += len(batch)
            if batch:
                after = highest_seen = batch[-1][0]
            if len(batch) < BATCH:
                break
        for log in logs.values():
            OrgLog.objects.filter(pk=log.pk).update(size=sizes[log.pk])
        _advance_watermark(state, postgres, watermark_ready, highest_seen)
    return Sequenced(leaves=total, logs=sizes)


def _log_locked(org_id: int) -> OrgLog:
    from governance.models import Organization

    log = OrgLog.objects.select_for_update().filter(org_id=org_id).first()
    if log is None:
        log_for_org(Organization.objects.get(pk=org_id))
        log = OrgLog.objects.select_for_update().get(org_id=org_id)
    return log


def _advance_watermark(state, postgres: bool, ready: bool, highest_seen: int) -> None:
    if not postgres:
        # Serialized writers: nothing below what this transaction sees can still commit.
        state.watermark = max(state.watermark, highest_seen)
        state.save(update_fields=["watermark", "updated_at"])
        return
    if ready:
        state.watermark = max(state.watermark, state.pending_max_id)
        state.pending_max_id = state.pending_xmax = None
    if state.pending_xmax is None:
        with connection.cursor() as cursor:
            state.pending_max_id, state.pending_xmax = _horizon(cursor)
    state.save(update_fields=["watermark", "pending_max_id", "pending_xmax", "updated_at"])


def unsequenced_count() -> int:
    """Events without a leaf (all of them, not only above the watermark): for checks."""
    return Event.objects.filter(leaf__isnull=True).count()


def leaf_of(event) -> LogLeaf | None:
    return LogLeaf.objects.filter(event=event).first()
