"""Appending to the ledger and verifying its chains."""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from ledger.canonical import canonical_json, sha256_hex
from ledger.models import GENESIS_HASH, Event, EventType, RunCounter
from ledger.redaction import Redacted


class LedgerError(Exception):
    """The ledger refused an append."""


def event_hash(*, prev_hash: str, run_id, seq: int, type: str, at, data) -> str:
    body = canonical_json(
        {"run": str(run_id), "seq": seq, "type": str(type), "at": at.isoformat(), "data": data}
    )
    return sha256_hex(prev_hash + body)


def _locked_counter(run_id) -> RunCounter:
    try:
        return RunCounter.objects.select_for_update().get(run_id=run_id)
    except RunCounter.DoesNotExist:
        pass
    try:
        with transaction.atomic():
            RunCounter.objects.create(run_id=run_id)
    except IntegrityError:
        pass  # a concurrent append created it; the lock below waits for that transaction
    return RunCounter.objects.select_for_update().get(run_id=run_id)


def event_append(*, run_id, type: EventType | str, redacted: Redacted) -> Event:
    """Append one event: lock the run's counter, take the next seq, chain the hash.

    Must run inside the caller's transaction so the event commits or rolls back with the
    write it records.
    """
    return events_append(run_id=run_id, events=[(type, redacted)])[0]


def events_append(*, run_id, events: Sequence[tuple[EventType | str, Redacted]]) -> list[Event]:
    """Append several events to one run, in order, under one lock of its counter: one read
    of the counter, one insert, one counter write, however many events."""
    for type, redacted in events:
        if not isinstance(redacted, Redacted):
            raise LedgerError("the ledger accepts only Redacted envelopes built by the redactor")
        if type not in EventType.values:
            raise LedgerError(f"unknown event type {type!r}")
    if not connection.in_atomic_block:
        raise LedgerError("event_append must run inside a transaction")
    counter = _locked_counter(run_id)
    seq, prev_hash = counter.last_seq, counter.last_hash
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
    Event.objects.bulk_create(rows)
    RunCounter.objects.filter(pk=counter.pk).update(last_seq=seq, last_hash=prev_hash)
    return rows


@dataclass(frozen=True)
class ChainBreak:
    run_id: str
    seq: int
    problem: str


def chain_verify(run_id) -> list[ChainBreak]:
    """Every gap, reordering or altered row in one run's chain (empty when intact)."""
    breaks: list[ChainBreak] = []
    prev_hash = GENESIS_HASH
    expected_seq = 1
    events = Event.objects.filter(run_id=run_id).order_by("seq").iterator(chunk_size=2000)
    for event in events:
        if event.seq != expected_seq:
            breaks.append(
                ChainBreak(
                    str(run_id),
                    expected_seq,
                    f"gap: expected seq {expected_seq}, found {event.seq}",
                )
            )
            expected_seq = event.seq
        if event.prev_hash != prev_hash:
            breaks.append(ChainBreak(str(run_id), event.seq, "prev_hash does not link"))
        recomputed = event_hash(
            prev_hash=event.prev_hash,
            run_id=event.run_id,
            seq=event.seq,
            type=event.type,
            at=event.at,
            data=event.data,
        )
        if recomputed != event.hash:
            breaks.append(ChainBreak(str(run_id), event.seq, "hash mismatch: row was altered"))
        prev_hash = event.hash
        expected_seq += 1
    counter = RunCounter.objects.filter(run_id=run_id).first()
    if counter and counter.last_seq != expected_seq - 1:
        breaks.append(
            ChainBreak(
                str(run_id),
                expected_seq,
                f"counter says {counter.last_seq} events, "
                f"found {expected_seq - 1}: events missing at the end",
            )
        )
    return breaks
