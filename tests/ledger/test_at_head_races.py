"""The one-statement append at the head, attacked on PostgreSQL: racing the locked appends
of the gate and the approvals, and fed heads that are stale, replayed, or another run's."""

import threading

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from governance.models import Run
from ledger.chain_checks import chain_verify
from ledger.models import Event, RunCounter
from ledger.redaction import redact
from ledger.services import (
    Alongside,
    event_append,
    event_append_at_head,
    events_append,
)
from tests.support.waiting import wait_until_waiting_on_locks

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def head_of(run_id) -> tuple[int, str]:
    last = Event.objects.filter(run_id=run_id).order_by("-seq").first()
    return last.seq, last.hash


def rows_of(run_id) -> list[tuple[int, int, str, str]]:
    return list(
        Event.objects.filter(run_id=run_id).order_by("seq").values_list("id", "seq", "type", "data")
    )


def test_gate_broker_and_approval_appends_racing_on_one_run_keep_one_gapless_chain(make_run):
    run_id, _ = make_run()
    workers, rounds, racers_count = 6, 20, 2
    made: list[tuple[int, str, str]] = []  # (seq, hash, marker) of every append that said so
    problems: list[str] = []
    paths = {"at head": 0, "locked": 0, "racer at head": 0}  # how the broker's appends went
    lock = threading.Lock()
    start = threading.Barrier(workers + racers_count)

    def work(worker: int) -> None:
        try:
            start.wait()
            for round_ in range(rounds):
                marker = f"{worker}-{round_}"
                # The gate: a request and its decision, under the counter's lock.
                with transaction.atomic():
                    requested, decided = events_append(
                        run_id=run_id,
                        events=[
                            ("tool.requested", redact({"m": f"{marker}-req"})),
                            ("tool.decision", redact({"m": f"{marker}-dec"})),
                        ],
                    )
                ours = [requested, decided]
                # The broker: its outcome at the head the gate's append left, else locked.
                head = (decided.seq, decided.hash)
                brokered = event_append_at_head(
                    run_id=run_id,
                    type="tool.brokered",
                    redacted=redact({"m": f"{marker}-brk"}),
                    head=head,
                )
                if brokered is not None:
                    with lock:
                        paths["at head"] += 1
                    if (brokered.seq, brokered.prev_hash) != (head[0] + 1, head[1]):
                        problems.append(f"{marker}: at-head append off its head")
                    # The same head replayed: it has moved (by the append just made).
                    replayed = event_append_at_head(
                        run_id=run_id,
                        type="tool.brokered",
                        redacted=redact({"m": f"{marker}-replayed"}),
                        head=head,
                    )
                    if replayed is not None:
                        problems.append(f"{marker}: a replayed head appended at {replayed.seq}")
                else:
                    with lock:
                        paths["locked"] += 1
                    with transaction.atomic():
                        brokered = event_append(
                            run_id=run_id,
                            type="tool.brokered",
                            redacted=redact({"m": f"{marker}-brk"}),
                        )
                ours.append(brokered)
                # An approval decided meanwhile.
                with transaction.atomic():
                    ours.append(
                        event_append(
                            run_id=run_id,
                            type="approval.decided",
                            redacted=redact({"m": f"{marker}-apr"}),
                        )
                    )
                with lock:
                    made.extend((row.seq, row.hash, row.data["m"]) for row in ours)
        except Exception as error:  # reported below, with the thread's name
            problems.append(f"worker {worker}: {error!r}")
        finally:
            connection.close()

    racing = threading.Event()

    def race_at_head(racer: int) -> None:
        # Appends at the head as last committed, racing the workers' locked appends and
        # each other: each head may be taken once.
        try:
            start.wait()
            count = 0
            while not racing.is_set():
                counter = RunCounter.objects.get(run_id=run_id)
                head = (counter.last_seq, counter.last_hash)
                row = event_append_at_head(
                    run_id=run_id,
                    type="tool.brokered",
                    redacted=redact({"m": f"racer-{racer}-{count}"}),
                    head=head,
                )
                if row is not None:
                    count += 1
                    with lock:
                        paths["racer at head"] += 1
                        made.append((row.seq, row.hash, row.data["m"]))
        except Exception as error:
            problems.append(f"racer {racer}: {error!r}")
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    racers = [threading.Thread(target=race_at_head, args=(r,)) for r in range(racers_count)]
    for thread in racers:
        thread.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    racing.set()
    for thread in racers:
        thread.join()

    assert problems == []
    rows = rows_of(run_id)
    # run.created, four appends per round, and the racers' appends.
    total = 1 + workers * rounds * 4 + paths["racer at head"]
    assert [seq for _, seq, _, _ in rows] == list(range(1, total + 1))  # no gap, no fork
    assert RunCounter.objects.get(run_id=run_id).last_seq == total
    assert "replayed" not in repr(rows)
    # What every append answered is what was stored at that seq.
    stored = {
        seq: (digest, data["m"])
        for seq, digest, data in Event.objects.filter(run_id=run_id, seq__gt=1).values_list(
            "seq", "hash", "data"
        )
    }
    assert {seq: (digest, m) for seq, digest, m in made} == stored
    # The chain in seq order is the chain of hashes, and ids follow seq (the sequencer's
    # order): the counter was moved before each event took its id.
    assert chain_verify(run_id) == []
    ids = [row_id for row_id, _, _, _ in rows]
    assert ids == sorted(ids)
    call_command("ledger", "verify", "--all")


def test_a_forged_or_another_runs_head_appends_nothing_anywhere(make_run):
    run_a, _ = make_run()
    run_b, _ = make_run()
    for run_id in (run_a, run_b):
        with transaction.atomic():
            event_append(run_id=run_id, type="tool.requested", redacted=redact({"i": 1}))
    head_a, head_b = head_of(run_a), head_of(run_b)
    table = connection.ops.quote_name(Run._meta.db_table)
    before = {run_id: rows_of(run_id) for run_id in (run_a, run_b)}

    forged = [
        (run_a, head_b),  # B's head, presented for A
        (run_b, head_a),
        (run_a, (head_a[0], head_b[1])),  # A's seq, another hash
        (run_a, (head_a[0] + 1, head_a[1])),  # A's hash, a seq ahead
        (run_a, (head_a[0] - 1, head_a[1])),
        (run_a, (head_a[0], "0" * 64)),
    ]
    for run_id, head in forged:
        rename = Alongside(f"UPDATE {table} SET agent = %s WHERE id = %s", ["forged", run_id])
        appended = event_append_at_head(
            run_id=run_id,
            type="tool.brokered",
            redacted=redact({"forged": True}),
            head=head,
            alongside=rename,
        )
        assert appended is None, (run_id, head)
    assert {run_id: rows_of(run_id) for run_id in (run_a, run_b)} == before
    assert not Run.objects.filter(agent="forged").exists()
    assert [r.last_seq for r in RunCounter.objects.filter(run_id__in=[run_a, run_b])] == [2, 2]

    # The true head still works, and lands on its own run only.
    appended = event_append_at_head(
        run_id=run_a, type="tool.brokered", redacted=redact({"true": True}), head=head_a
    )
    assert appended is not None and (appended.seq, appended.prev_hash) == (3, head_a[1])
    assert rows_of(run_b) == before[run_b]
    assert chain_verify(run_a) == [] and chain_verify(run_b) == []


@pytest.mark.parametrize("other_commits", [True, False])
def test_an_append_at_the_head_waiting_on_a_locked_append_sees_what_it_committed(
    make_run, other_commits
):
    # The at-head UPDATE meets the counter row locked by a gate append in flight; it must
    # wait, then re-check the row as committed: moved (commit) means nothing written, the
    # same head (rollback) means appended there.
    run_id, _ = make_run()
    head = head_of(run_id)
    locked, release = threading.Event(), threading.Event()
    outcome: dict = {}

    def gate_append() -> None:
        try:
            with transaction.atomic():
                events_append(
                    run_id=run_id,
                    events=[("tool.requested", redact({"by": "gate"}))],
                )
                locked.set()
                release.wait(timeout=60)
                if not other_commits:
                    raise RuntimeError("rolled back")
        except RuntimeError:
            pass
        finally:
            connection.close()

    def broker_append() -> None:
        try:
            outcome["row"] = event_append_at_head(
                run_id=run_id, type="tool.brokered", redacted=redact({"by": "broker"}), head=head
            )
        except Exception as error:
            outcome["error"] = error
        finally:
            connection.close()

    gate_thread = threading.Thread(target=gate_append)
    gate_thread.start()
    assert locked.wait(timeout=60)
    broker_thread = threading.Thread(target=broker_append)
    broker_thread.start()
    wait_until_waiting_on_locks(1, "the at-head append waiting on the counter row's lock")
    release.set()
    gate_thread.join()
    broker_thread.join()

    assert "error" not in outcome
    types = [type_ for _, _, type_, _ in rows_of(run_id)]
    if other_commits:
        assert outcome["row"] is None
        assert types == ["run.created", "tool.requested"]
    else:
        assert outcome["row"] is not None and outcome["row"].seq == head[0] + 1
        assert types == ["run.created", "tool.brokered"]
    assert chain_verify(run_id) == []
