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
from ledger.tree import TreeAppender
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


def _horizon(cursor) -> tuple[int, int]:
    """The largest event id visible now, and the xmax of the same snapshot."""
    cursor.execute(
        f"SELECT COALESCE(MAX(id), 0), pg_snapshot_xmax(pg_current_snapshot())::text::bigint "
        f"FROM {Event._meta.db_table}"
    )
    return cursor.fetchone()


def _quoted(model, *fields: str) -> list[str]:
    quote = connection.ops.quote_name
    return [quote(model._meta.db_table)] + [
        quote(model._meta.get_field(name).column) for name in fields
    ]


def _candidates(after: int, up_to: int | None = None) -> tuple[int, list, bool]:
    """The next BATCH events after `after` that have no leaf, as (id, hash, org id, run id,
    seq); the last id read (to page on); whether that was all there is to read now.

    One index walk over the events with a probe of the leaves' event index for each: a
    scalar subquery with LIMIT, which PostgreSQL cannot turn into an anti-join or a hashed
    subplan over the whole leaves table. Events that have leaves (a sweep meets mostly
    those) never leave the database."""
    from governance.models import Run

    events, e_id, e_hash, e_run, e_seq = _quoted(Event, "id", "hash", "run", "seq")
    runs, r_id, r_org = _quoted(Run, "id", "org")
    leaves, l_event = _quoted(LogLeaf, "event")
    bound, params = "", [after]
    if up_to is not None:
        bound, params = f" AND e.{e_id} <= %s", [after, up_to]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT e.{e_id}, e.{e_hash}, r.{r_org}, CAST(e.{e_run} AS TEXT), e.{e_seq} "
            f"FROM {events} e JOIN {runs} r ON r.{r_id} = e.{e_run} "
            f"WHERE e.{e_id} > %s{bound} "
            f"AND (SELECT 1 FROM {leaves} l WHERE l.{l_event} = e.{e_id} LIMIT 1) IS NULL "
            f"ORDER BY e.{e_id} LIMIT {BATCH:d}",
            params,
        )
        rows = cursor.fetchall()
    if not rows:
        return after, [], True
    return rows[-1][0], rows, len(rows) < BATCH


class _Heads:
    """Each run's last sequenced seq, read once per pass and written back at its end. Run ids
    are the database's text for them (cheaper to hash than UUID objects)."""

    def __init__(self) -> None:
        self.seqs: dict = {}
        self._changed: set = set()

    def load(self, run_ids: set) -> None:
        missing = [run_id for run_id in run_ids if run_id not in self.seqs]
        if not missing:
            return
        table, run, seq = _quoted(SequencedRun, "run", "seq")
        if connection.vendor == "postgresql":
            wanted = [(f"{run} = ANY(%s::uuid[])", [missing])]
        else:  # a parameter per run, in chunks under SQLite's limit
            parts = [missing[i : i + 500] for i in range(0, len(missing), 500)]
            wanted = [(f"{run} IN ({', '.join(['%s'] * len(part))})", part) for part in parts]
        with connection.cursor() as cursor:
            for where, params in wanted:
                cursor.execute(
                    f"SELECT CAST({run} AS TEXT), {seq} FROM {table} WHERE {where}", params
                )
                self.seqs.update(cursor.fetchall())
        for run_id in missing:
            self.seqs.setdefault(run_id, 0)

    def advance(self, run_id, seq: int) -> None:
        self.seqs[run_id] = seq
        self._changed.add(run_id)

    def save(self) -> None:
        if not self._changed:
            return
        table, run, seq = _quoted(SequencedRun, "run", "seq")
        upsert = f"ON CONFLICT ({run}) DO UPDATE SET {seq} = excluded.{seq}"
        changed = list(self._changed)
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":  # one statement for all the runs
                cursor.execute(
                    f"INSERT INTO {table} ({run}, {seq}) "
                    f"SELECT * FROM unnest(%s::text[]::uuid[], %s::bigint[]) {upsert}",
                    [changed, [self.seqs[run_id] for run_id in changed]],
                )
            else:
                cursor.executemany(
                    f"INSERT INTO {table} ({run}, {seq}) VALUES (%s, %s) {upsert}",
                    [(run_id, self.seqs[run_id]) for run_id in changed],
                )
        self._changed.clear()


def _in_run_order(batch, heads: _Heads) -> tuple[list, bool]:
    """The batch's events that directly follow their run's last sequenced seq (or each
    other). An event whose predecessor has no leaf yet waits, with the rest of its run:
    it committed while a scan was already past its predecessor's id."""
    heads.load({event[3] for event in batch})
    accepted, blocked, deferred = [], set(), False
    for event in batch:
        run_id, seq = event[3], event[4]
        if run_id in blocked or seq != heads.seqs[run_id] + 1:
            blocked.add(run_id)
            deferred = True
            continue
        heads.advance(run_id, seq)
        accepted.append(event)
    return accepted, deferred


def _state_locked(postgres: bool) -> tuple[SequencerState, int | None]:
    """The sequencer's row, locked (made on first use), and on PostgreSQL the oldest running
    transaction id, read by the same statement. DatabaseError when another sequencer holds
    the row.

    The statement also turns JIT compilation off for the rest of the pass: the planner prices
    a scan for events without leaves as if it had to walk the whole table (it cannot know
    they are all at the end), and would spend more compiling than the index walk takes."""
    table, name = _quoted(SequencerState, "name")
    for _ in range(2):
        with transaction.atomic():  # a savepoint: a refused lock leaves the rest usable
            if postgres:
                found = list(
                    SequencerState.objects.raw(
                        f"SELECT *, pg_snapshot_xmin(pg_current_snapshot())::text::bigint "
                        f"AS snapshot_xmin, set_config('jit', 'off', true) AS jit "
                        f"FROM {table} WHERE {name} = %s FOR UPDATE NOWAIT",
                        ["ledger"],
                    )
                )
            else:  # SQLite: writers are serialized, the transaction is the lock
                found = list(SequencerState.objects.filter(name="ledger"))
        if found:
            return found[0], getattr(found[0], "snapshot_xmin", None)
        SequencerState.objects.get_or_create(name="ledger")
    raise DatabaseError("the sequencer's state row cannot be read")


def sequence() -> Sequenced | None:
    """One pass: visible events without a leaf get one, each run's in seq order, at most
    PASS_LIMIT of them (a backlog drains over several passes). Returns None when another
    sequencer holds the lock (it is doing the same work)."""
    with transaction.atomic():
        postgres = connection.vendor == "postgresql"
        try:
            state, xmin = _state_locked(postgres)
        except DatabaseError:
            return None
        ready = postgres and state.pending_xmax is not None and xmin >= state.pending_xmax
        now = timezone.now()
        sweep = (
            not postgres or ready or state.swept_at is None or now - state.swept_at >= SWEEP_EVERY
        )
        work = _Pass()
        if sweep and state.cursor > state.watermark:
            # Events that committed after others with bigger ids had their leaves.
            work.scan(after=state.watermark, up_to=state.cursor)
        work.scan(after=max(state.watermark, state.cursor), limit=PASS_LIMIT)
        work.heads.save()
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
        self.trees: dict[int, TreeAppender] = {}  # by log id
        self.heads = _Heads()
        self.total = 0
        self.highest_seen = 0
        self.deferred = False
        self.capped = False

    @property
    def sizes(self) -> dict[int, int]:
        return {log_id: tree.size for log_id, tree in self.trees.items()}

    def scan(self, *, after: int, up_to: int | None = None, limit: int | None = None) -> None:
        while True:
            last_read, batch, exhausted = _candidates(after, up_to)
            accepted, held_back = _in_run_order(batch, self.heads)
            self.deferred = self.deferred or held_back
            by_org: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
            for event_id, digest, org_id, _, _ in accepted:
                by_org[org_id].append((event_id, event_leaf_hash(digest)))
            for org_id, leaves in by_org.items():
                log = self.logs.get(org_id)
                if log is None:
                    log = _log_locked(org_id)
                    self.logs[org_id] = log
                    self.trees[log.pk] = TreeAppender(log.pk, log.size)
                self.trees[log.pk].append(leaves)
            self.total += len(accepted)
            self.highest_seen = max(self.highest_seen, last_read)
            if exhausted:
                # What commits from now on waits for the next pass: chasing the tail while
                # appends go on would take it in many small batches, each costing its
                # round trips.
                return
            after = last_read
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
