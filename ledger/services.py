"""Appending to the ledger and verifying its chains."""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from fluidbox.canonical import canonical_json, sha256_hex
from fluidbox.prebuilt_sql import ModelTable, statement_cursor
from governance.observability import metrics
from ledger.models import Event, EventType, RunCounter
from ledger.redaction import Redacted


class LedgerError(Exception):
    """The ledger refused an append."""


def event_hash(*, prev_hash: str, run_id, seq: int, type: str, at, data) -> str:
    body = canonical_json(
        {"run": str(run_id), "seq": seq, "type": str(type), "at": at.isoformat(), "data": data}
    )
    return sha256_hex(prev_hash + body)


_counters = ModelTable(RunCounter)
_events = ModelTable(Event)
# `EventType.values` builds a new list on every read; the check runs on every append.
_EVENT_TYPES = frozenset(EventType.values)


@cache
def _advance_statement(vendor: str) -> str:
    seq, head = _counters.column("last_seq"), _counters.column("last_hash")
    return (
        f"UPDATE {_counters.name} SET {seq} = {seq} + %s "
        f"WHERE {_counters.column('run')} = %s RETURNING {seq}, {head}"
    )


@cache
def _set_head_statement(vendor: str) -> str:
    return (
        f"UPDATE {_counters.name} SET {_counters.column('last_hash')} = %s "
        f"WHERE {_counters.column('run')} = %s"
    )


def _advance_counter(cursor, run_id, count: int) -> tuple[int, str]:
    """Lock the run's counter row and move it on by `count` in one statement. Returns the
    seq and hash the new events chain from.

    UPDATE … RETURNING waits for the row lock and then sees the latest committed row, which
    a SELECT … FOR UPDATE followed by an UPDATE would need two round trips for.
    """
    advance = _advance_statement(connection.vendor)
    run = _counters.prepared("run", run_id)
    cursor.execute(advance, [count, run])
    row = cursor.fetchone()
    if row is None:
        try:
            with transaction.atomic():
                RunCounter.objects.create(run_id=run_id)
        except IntegrityError:
            pass  # a concurrent append created it; the UPDATE below waits for its transaction
        cursor.execute(advance, [count, run])
        row = cursor.fetchone()
    last_seq, last_hash = row
    return last_seq - count, last_hash


@dataclass(frozen=True)
class Alongside:
    """A write of another table that commits with the events it is recorded by, sent in
    the same statement as their insert where the database allows it (one round trip). An
    UPDATE or INSERT without RETURNING, with `%s` placeholders and prepared parameters."""

    sql: str
    params: Sequence


def _insert_events(
    cursor, rows: list[Event], run_id, head_hash: str, alongside: Alongside | None
) -> None:
    """Insert the events, record the chain's new head and run the caller's `alongside`
    write. On PostgreSQL all of it is one statement (data-modifying CTEs); SQLite has no
    such thing and takes one statement each."""
    insert, params = _events.insert_statement(len(rows)), _events.insert_params(rows)
    set_head = _set_head_statement(connection.vendor)
    head_params = [head_hash, _counters.prepared("run", run_id)]
    if connection.vendor == "postgresql":
        also, also_params = "", []
        if alongside is not None:
            also, also_params = f", alongside AS ({alongside.sql})", list(alongside.params)
        cursor.execute(
            f"WITH inserted AS ({insert}), head AS ({set_head}){also} SELECT * FROM inserted",
            params + head_params + also_params,
        )
        _events.adopt(rows, [pk for (pk,) in cursor.fetchall()])
    else:
        cursor.execute(insert, params)
        _events.adopt(rows, [pk for (pk,) in cursor.fetchall()])
        cursor.execute(set_head, head_params)
        if alongside is not None:
            cursor.execute(alongside.sql, list(alongside.params))


@dataclass(frozen=True)
class InsertedAlongside:
    """A new row of another table, written by `events_append_at_head` with the events it
    is recorded by, only where the head held; its primary key is filled in."""

    table: ModelTable
    instance: Any


@dataclass(frozen=True)
class ReadAlongside:
    """A whole SELECT (one row, `%s` placeholders) that `events_append_at_head` runs in its
    own statement, so in the snapshot its writes were made in; the row comes back as
    `AppendedAtHead.read`."""

    sql: str
    params: Sequence


@dataclass(frozen=True)
class AppendedAtHead:
    events: list[Event]
    read: tuple | None  # the row of the `reading` asked for, if any


@cache
def _at_head_statement(
    vendor: str,
    count: int,
    alongside_sql: str | None,
    inserted_table: ModelTable | None,
    reading_sql: str | None,
) -> str:
    seq, head, run = (_counters.column(name) for name in ("last_seq", "last_hash", "run"))
    parts = [
        f"head AS (UPDATE {_counters.name} SET {seq} = {seq} + %s, {head} = %s "
        f"WHERE {run} = %s AND {seq} = %s AND {head} = %s RETURNING {seq})",
        f"inserted AS ({_events.insert_select_statement(count, 'head')})",
    ]
    if alongside_sql is not None:
        parts.append(f"alongside AS ({alongside_sql} AND EXISTS (SELECT 1 FROM head))")
    columns, tables = [f"inserted.{_events.pk}"], ["inserted"]
    if inserted_table is not None:
        parts.append(f"row AS ({inserted_table.insert_select_statement(1, 'head')})")
        columns.append("(SELECT * FROM row)")
    if reading_sql is not None:
        columns.append("reading.*")
        tables.append(f"({reading_sql}) reading")
    return f"WITH {', '.join(parts)} SELECT {', '.join(columns)} FROM {' CROSS JOIN '.join(tables)}"


def events_append_at_head(
    *,
    run_id,
    events: Sequence[tuple[EventType | str, Redacted]],
    head: tuple[int, str],
    alongside: Alongside | None = None,
    inserting: InsertedAlongside | None = None,
    reading: ReadAlongside | None = None,
) -> AppendedAtHead | None:
    """Append events in ONE statement, on its own (autocommit) or in the caller's
    transaction, if the run's chain still ends at `head` (seq, hash): the head the caller's
    own last append left, or the one the run's token check read. None, with nothing
    written (`alongside` and `inserting` included) and nothing read, when it has moved; the
    caller then appends with `events_append`, under the counter's lock.

    The statement moves the counter on only if it still holds `head` (an UPDATE waits for
    a concurrent append's lock and then re-checks the row it committed), and inserts the
    events from that UPDATE's row: the chain is the one `events_append` would write, and the
    counter is written before the events take their ids, as the sequencer requires. Where
    `events_append` takes four round trips in its transaction (begin, lock the counter,
    insert, commit), this takes one. PostgreSQL only (data-modifying CTEs); elsewhere None.
    `alongside` must be an UPDATE whose WHERE clause ends in a condition that can be ANDed
    with the head's (`… WHERE id = %s`, not `… OR …`): it runs only where the head held.
    An error of any part (a unique index refusing `inserting`'s row) writes nothing.
    """
    if connection.vendor != "postgresql":
        return None
    _check_envelopes(events)
    if alongside is not None and not (
        alongside.sql.lstrip().upper().startswith("UPDATE ") and " WHERE " in alongside.sql
    ):
        raise LedgerError("an alongside write at the head must be an UPDATE with a WHERE")
    last_seq, last_hash = head
    rows = _chained(run_id, events, last_seq, last_hash)
    statement = _at_head_statement(
        connection.vendor,
        len(rows),
        alongside.sql if alongside else None,
        inserting.table if inserting else None,
        reading.sql if reading else None,
    )
    params = [len(rows), rows[-1].hash, _counters.prepared("run", run_id), last_seq, last_hash]
    params += _events.insert_params(rows)
    params += list(alongside.params) if alongside is not None else []
    params += inserting.table.insert_params([inserting.instance]) if inserting else []
    params += list(reading.params) if reading is not None else []
    with statement_cursor() as cursor:
        cursor.execute(statement, params)
        inserted = cursor.fetchall()
    if not inserted:
        return None
    _events.adopt(rows, [found[0] for found in inserted])
    read_from = 1
    if inserting is not None:
        inserting.table.adopt([inserting.instance], [inserted[0][1]])
        read_from = 2
    metrics.ledger_events_appended(row.type for row in rows)
    return AppendedAtHead(rows, inserted[0][read_from:] if reading is not None else None)


def event_append_at_head(
    *,
    run_id,
    type: EventType | str,
    redacted: Redacted,
    head: tuple[int, str],
    alongside: Alongside | None = None,
) -> Event | None:
    """`events_append_at_head` of one event: the event, or None when the head has moved."""
    appended = events_append_at_head(
        run_id=run_id, events=[(type, redacted)], head=head, alongside=alongside
    )
    return appended.events[0] if appended is not None else None


def event_data(run_id, event_type: EventType, **fields) -> dict | None:
    """The data of the run's first event of `event_type` whose data holds `fields`
    (`reservation_id=7`): what was recorded then, not what the rows say now."""
    lookup = {f"data__{name}": value for name, value in fields.items()}
    data = (
        Event.objects.filter(run_id=run_id, type=event_type, **lookup)
        .order_by("seq")
        .values_list("data", flat=True)
        .first()
    )
    return data if isinstance(data, dict) else None


def chain_lock(*, run_id) -> None:
    """Take the run's counter lock now, in the caller's transaction, before it writes any
    other row of the run. Whatever appends to a run's chain takes this lock before the rows
    its events record (the gate before it inserts the call, a settlement before it updates
    the approval and the call, a finish before it ends the run), so two writers of one run
    wait for each other in one order instead of each holding what the other needs: a retry
    of a call being decided holds the counter while its insert waits on the decision's
    update of that call. SQLite needs no order: a writing transaction takes the whole
    database as it begins (IMMEDIATE)."""
    if not connection.in_atomic_block:
        raise LedgerError("chain_lock must run inside a transaction")
    if connection.features.has_select_for_update:
        locked = RunCounter.objects.select_for_update().filter(run_id=run_id)
        list(locked.values_list("pk", flat=True))  # no row yet: nothing of the run to order


def event_append(
    *, run_id, type: EventType | str, redacted: Redacted, alongside: Alongside | None = None
) -> Event:
    """Append one event: lock the run's counter, take the next seq, chain the hash.

    Must run inside the caller's transaction so the event commits or rolls back with the
    write it records (which may ride along with the insert: `alongside`).
    """
    return events_append(run_id=run_id, events=[(type, redacted)], alongside=alongside)[0]


def events_append(
    *,
    run_id,
    events: Sequence[tuple[EventType | str, Redacted]],
    alongside: Alongside | None = None,
) -> list[Event]:
    """Append several events to one run, in order, under one lock of its counter: two
    statements however many events (three on SQLite, four with `alongside`).

    The hot path of every gate decision, so its statements are prebuilt
    (`fluidbox.prebuilt_sql`): the ORM's insert and update machinery cost more CPU than the
    statements themselves.
    """
    return events_write(events_reserve(run_id=run_id, count=len(events)), events, alongside)


@dataclass(frozen=True)
class Reserved:
    """Seqs taken on a run's chain under its counter's lock (`events_reserve`), for the
    events `events_write` writes later in the same transaction."""

    run_id: Any
    seq: int  # the chain's head before them
    prev_hash: str
    count: int


def events_reserve(*, run_id, count: int) -> Reserved:
    """Lock the run's counter and take its next `count` seqs, in the caller's transaction,
    which must then write them (`events_write`) before it commits. For a caller whose other
    writes must come after the lock: the gate records a call either this way or in one
    statement at the head (`events_append_at_head`), and both must take the counter's lock
    before the tool call's unique index, or two requests with the same ids, one each way,
    could each wait for the other."""
    if not connection.in_atomic_block:
        raise LedgerError("event_append must run inside a transaction")
    with statement_cursor() as cursor:
        seq, prev_hash = _advance_counter(cursor, run_id, count)
    return Reserved(run_id, seq, prev_hash, count)


def events_write(
    reserved: Reserved,
    events: Sequence[tuple[EventType | str, Redacted]],
    alongside: Alongside | None = None,
) -> list[Event]:
    """The events at the seqs `reserved` took, chained on from its head."""
    _check_envelopes(events)
    if len(events) != reserved.count:
        raise LedgerError(f"{len(events)} events for {reserved.count} reserved seqs")
    rows = _chained(reserved.run_id, events, reserved.seq, reserved.prev_hash)
    head_hash = rows[-1].hash if rows else reserved.prev_hash
    with statement_cursor() as cursor:
        _insert_events(cursor, rows, reserved.run_id, head_hash, alongside)
    metrics.ledger_events_appended(row.type for row in rows)
    return rows


def _check_envelopes(events: Sequence[tuple[EventType | str, Redacted]]) -> None:
    for type, redacted in events:
        if not isinstance(redacted, Redacted):
            raise LedgerError("the ledger accepts only Redacted envelopes built by the redactor")
        if type not in _EVENT_TYPES:
            raise LedgerError(f"unknown event type {type!r}")


def _chained(
    run_id, events: Sequence[tuple[EventType | str, Redacted]], seq: int, prev_hash: str
) -> list[Event]:
    """The rows of `events`, chained on from the head (`seq`, `prev_hash`)."""
    rows = []
    for type, redacted in events:
        seq += 1
        at = timezone.now()
        data = redacted.data
        digest = event_hash(
            prev_hash=prev_hash, run_id=run_id, seq=seq, type=type, at=at, data=data
        )
        rows.append(
            Event(
                run_id=run_id,
                seq=seq,
                type=str(type),
                at=at,
                data=data,
                prev_hash=prev_hash,
                hash=digest,
            )
        )
        prev_hash = digest
    return rows
