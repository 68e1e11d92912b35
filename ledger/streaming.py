"""Streaming the ledger to an organization's audit sinks (a SIEM): every event, the same
redacted envelope the events API serves, in seq order per run, at least once.

The ledger itself is the backlog: nothing is queued on the gate's path, so a slow or dead
sink never slows a decision. Each sink keeps a cursor per run (the last seq it
acknowledged); a run's events commit in seq order under its counter's lock, so "after the
cursor" never skips one. Delivery resumes from the cursors after any restart; a batch that
was sent but not recorded as acknowledged is sent again, with the same idempotency keys
(`<run>:<seq>`), for the receiver to drop.

`manage.py ledger stream` runs `sinks_deliver` in a loop; several may run, a lease per sink
keeps one deliverer on it at a time (two would break the order).
"""

import json
import logging
import socket
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.db import IntegrityError, connections, transaction
from django.db.models import F, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from governance.egress import EgressRefused, guarded_post
from governance.errors import Invalid
from ledger.api import event_json
from ledger.models import AuditSink, Event, RunCounter, SinkCursor, SinkKind
from ledger.sinks import sink_token

logger = logging.getLogger(__name__)

RETRY_SECONDS = (1, 2, 4, 8, 15, 30, 60)
RUNS_PER_PASS = 500
HEC_SOURCETYPE = "fluidbox:ledger"


# --- what is pending --------------------------------------------------------------------


def _acked(sink_id):
    cursor = SinkCursor.objects.filter(sink_id=sink_id, run_id=OuterRef("run_id"))
    return Coalesce(Subquery(cursor.values("acked_seq")[:1]), Value(0))


def _pending_runs(sink: AuditSink, limit: int | None = RUNS_PER_PASS):
    """(run_id, acked_seq, last_seq) of the org's runs with events the sink has not
    acknowledged, oldest run first."""
    rows = (
        RunCounter.objects.filter(run__org_id=sink.org_id)
        .annotate(acked=_acked(sink.pk))
        .filter(last_seq__gt=F("acked"))
        .order_by("run__created_at", "run_id")
        .values_list("run_id", "acked", "last_seq")
    )
    return list(rows if limit is None else rows[:limit])


def sink_lag(sink: AuditSink) -> int:
    total = (
        RunCounter.objects.filter(run__org_id=sink.org_id)
        .annotate(acked=_acked(sink.pk))
        .aggregate(lag=Sum(F("last_seq") - F("acked")))["lag"]
    )
    return max(0, total or 0)


def sink_lags() -> dict[int, int]:
    """Every sink's lag in events, for /metrics and the admin."""
    return {sink.pk: sink_lag(sink) for sink in AuditSink.objects.all()}


# --- the envelope on the wire ------------------------------------------------------------


def envelope(event: Event, org_slug: str) -> dict:
    """The events API's redacted envelope, with where it belongs and its idempotency key."""
    return {
        "idempotency_key": f"{event.run_id}:{event.seq}",
        "org": org_slug,
        "run": str(event.run_id),
        **event_json(event),
        "prev_hash": event.prev_hash,
    }


def _body(sink: AuditSink, envelopes: list[dict], token: str) -> tuple[bytes, dict[str, str]]:
    headers: dict[str, str] = {}
    if sink.kind == SinkKind.SPLUNK_HEC:
        # HEC's batch format: event objects one after another; `time` in epoch seconds.
        lines = [
            json.dumps(
                {
                    "time": _epoch(item["at"]),
                    "host": socket.gethostname(),
                    "source": "fluidbox",
                    "sourcetype": HEC_SOURCETYPE,
                    "event": item,
                    "fields": {"idempotency_key": item["idempotency_key"], "org": item["org"]},
                },
                ensure_ascii=False,
                separators=(",", ":"),
            )
            for item in envelopes
        ]
        headers["Content-Type"] = "application/json"
        headers["Authorization"] = f"Splunk {token}"
    else:
        lines = [json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in envelopes]
        headers["Content-Type"] = "application/x-ndjson"
        if token:
            headers["Authorization"] = f"Bearer {token}"
    return ("\n".join(lines) + "\n").encode("utf-8"), headers


def _epoch(at: str) -> float:
    return round(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp(), 6)


# --- delivering -------------------------------------------------------------------------


@dataclass(frozen=True)
class Pass:
    delivered: int = 0
    dropped: int = 0
    failed: bool = False


def _lease(sink_id, owner: str) -> AuditSink | None:
    """The sink as it is now, once leased; None when it is leased elsewhere, switched off or
    no longer due. A pass loads its sinks before it delivers them in turn (each may wait out
    its timeout): the URL, token, bound and failures it delivers with are read again here,
    so a batch never goes to a URL its admin has moved the sink away from meanwhile."""
    now = timezone.now()
    until = now + timedelta(seconds=settings.FLUIDBOX_SINK_TIMEOUT + 30)
    free = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now)
    due = Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    claimed = AuditSink.objects.filter(free, due, pk=sink_id, is_active=True).update(
        lease_owner=owner, lease_expires_at=until
    )
    if not claimed:
        return None
    return AuditSink.objects.select_related("org").filter(pk=sink_id).first()


def _release(sink_id, owner: str) -> None:
    AuditSink.objects.filter(pk=sink_id, lease_owner=owner).update(
        lease_owner="", lease_expires_at=None
    )


def _advance(sink_id, run_id, seq: int) -> None:
    """Move a cursor forward, never back (a stalled deliverer finishing late must not
    rewind what a later one acknowledged)."""
    moved = SinkCursor.objects.filter(sink_id=sink_id, run_id=run_id, acked_seq__lt=seq).update(
        acked_seq=seq
    )
    if moved:
        return
    try:
        with transaction.atomic():
            SinkCursor.objects.get_or_create(
                sink_id=sink_id, run_id=run_id, defaults={"acked_seq": seq}
            )
    except IntegrityError:
        pass
    SinkCursor.objects.filter(sink_id=sink_id, run_id=run_id, acked_seq__lt=seq).update(
        acked_seq=seq
    )


def _drop_past_bound(sink: AuditSink) -> int:
    """A sink whose backlog passed its bound loses the oldest undelivered events (they stay
    in the ledger, and in the events API): counted, shown, never silent."""
    excess = sink_lag(sink) - sink.max_backlog
    if excess <= 0:
        return 0
    dropped = 0
    with transaction.atomic():
        for run_id, acked, last_seq in _pending_runs(sink, limit=None):
            if dropped >= excess:
                break
            skip = min(last_seq - acked, excess - dropped)
            _advance(sink.pk, run_id, acked + skip)
            dropped += skip
        AuditSink.objects.filter(pk=sink.pk).update(dropped_events=F("dropped_events") + dropped)
    logger.warning("audit sink %s: %s events dropped past its backlog bound", sink.label, dropped)
    return dropped


def _batch(sink: AuditSink) -> list[Event]:
    events: list[Event] = []
    room = settings.FLUIDBOX_SINK_BATCH
    for run_id, acked, _last in _pending_runs(sink):
        chunk = list(Event.objects.filter(run_id=run_id, seq__gt=acked).order_by("seq")[:room])
        events.extend(chunk)
        room -= len(chunk)
        if room <= 0:
            break
    return events


def _failed(sink: AuditSink, error: str) -> None:
    failures = sink.consecutive_failures + 1
    delay = RETRY_SECONDS[min(failures, len(RETRY_SECONDS)) - 1]
    now = timezone.now()
    AuditSink.objects.filter(pk=sink.pk).update(
        failed_attempts=F("failed_attempts") + 1,
        consecutive_failures=failures,
        next_attempt_at=now + timedelta(seconds=delay),
        last_error=error[:300],
        last_error_at=now,
    )
    logger.warning("audit sink %s: %s (retry in %s s)", sink.label, error, delay)


def _send(sink: AuditSink, events: list[Event]) -> str | None:
    """POST one batch; None when the sink acknowledged it (any 2xx), else why not."""
    try:
        token = sink_token(sink)
    except Invalid as invalid:
        return str(invalid.detail)
    body, headers = _body(sink, [envelope(event, sink.org.slug) for event in events], token)
    try:
        response = guarded_post(
            sink.org,
            sink.url,
            content=body,
            headers=headers,
            timeout=settings.FLUIDBOX_SINK_TIMEOUT,
        )
    except EgressRefused as refused:
        return str(refused)
    except httpx.TimeoutException:
        return f"no complete answer within {settings.FLUIDBOX_SINK_TIMEOUT} s"
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        # The class only: an exception's text can quote the URL's userinfo or the server.
        return f"could not deliver ({type(error).__name__})"
    if 200 <= response.status_code < 300:
        return None
    return f"the sink answered {response.status_code}"


def sink_deliver_batch(sink: AuditSink) -> Pass:
    """Drop past the bound, then send the next batch and, once acknowledged, advance."""
    dropped = _drop_past_bound(sink)
    events = _batch(sink)
    if not events:
        return Pass(dropped=dropped)
    error = _send(sink, events)
    if error is not None:
        _failed(sink, error)
        return Pass(dropped=dropped, failed=True)
    last: dict = {}
    for event in events:
        last[event.run_id] = event.seq
    with transaction.atomic():
        for run_id, seq in last.items():
            _advance(sink.pk, run_id, seq)
        AuditSink.objects.filter(pk=sink.pk).update(
            delivered_events=F("delivered_events") + len(events),
            consecutive_failures=0,
            next_attempt_at=None,
            last_success_at=timezone.now(),
            last_error="",
            last_error_at=None,
        )
    return Pass(delivered=len(events), dropped=dropped)


def _deliver_leased(sink: AuditSink, owner: str) -> Pass:
    leased = _lease(sink.pk, owner)
    if leased is None:
        return Pass()
    sink = leased
    try:
        return sink_deliver_batch(sink)
    except Exception:  # one broken sink must not stop the others
        logger.exception("audit sink %s: delivery pass failed", sink.label)
        _failed(sink, "internal error (see the streamer's log)")
        return Pass(failed=True)
    finally:
        _release(sink.pk, owner)


def _deliver_in_thread(sink: AuditSink, owner: str) -> Pass:
    try:
        return _deliver_leased(sink, owner)
    finally:
        connections.close_all()  # this thread's own connection


def sinks_deliver(*, owner: str | None = None) -> Pass:
    """One batch for every active sink that is due and not leased by another deliverer.
    Sinks are delivered side by side (up to FLUIDBOX_SINK_PARALLEL at once), those without
    failures first: a sink that waits out its timeout holds no other sink back."""
    owner = owner or uuid.uuid4().hex
    now = timezone.now()
    due = Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    sinks = list(
        AuditSink.objects.filter(due, is_active=True)
        .select_related("org")
        .order_by("consecutive_failures", "pk")
    )
    if len(sinks) <= 1:
        outcomes = [_deliver_leased(sink, owner) for sink in sinks]
    else:
        workers = min(len(sinks), settings.FLUIDBOX_SINK_PARALLEL)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sink") as pool:
            outcomes = list(pool.map(lambda sink: _deliver_in_thread(sink, owner), sinks))
    return Pass(
        delivered=sum(outcome.delivered for outcome in outcomes),
        dropped=sum(outcome.dropped for outcome in outcomes),
        failed=any(outcome.failed for outcome in outcomes),
    )


def stream(*, stop, poll: float = 0.5, idle_pass: float = 2.0, owner: str | None = None) -> None:
    """Deliver until `stop` (a threading.Event) is set: a pass right away whenever the ledger
    has a new event (the newest id, read from its index) or the last pass had work, and at
    least every `idle_pass` seconds otherwise, for retries that fall due and for a
    transaction that committed an older id late. An idle pass costs one indexed read, not a
    scan of every run's cursor."""
    from django.db import connection
    from django.db.models import Max

    owner = owner or uuid.uuid4().hex
    newest_seen = None
    last_pass = float("-inf")
    busy = True
    while not stop.is_set():
        newest = Event.objects.aggregate(newest=Max("pk"))["newest"]
        now = time.monotonic()
        if busy or newest != newest_seen or now - last_pass >= idle_pass:
            newest_seen, last_pass = newest, now
            outcome = sinks_deliver(owner=owner)
            busy = bool(outcome.delivered or outcome.dropped)
        if not busy:
            connection.close()  # hold no connection while idle
            stop.wait(poll)
