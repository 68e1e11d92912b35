"""The auditor's ledger: appends/s with the sequencer signing checkpoints vs without it,
inclusion-proof time in a 10^6-event log, and the offline verifier's throughput.

    DATABASE_URL=postgres://postgres@127.0.0.1:55432/fb_bench .venv/bin/python \\
        bench/ledger_checkpoints.py [--events 1000000] [--append-events 8000] [--rounds 6]

Run it against a scratch PostgreSQL database on this machine: it migrates it, fills it
with throwaway orgs, and reads its backends' CPU from /proc. On a shared machine, wall
clock figures move with the load; the CPU figures (this process, the sequencer, and their
PostgreSQL backends) are what the code costs.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    READ_BUNDLE,
    READ_POLICY,
    bench_org,
    bench_runs,
    cpu_seconds,
    django_setup,
    migrate,
    percentile,
)

django_setup()

from django.conf import settings  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.ledger_append import append_events  # noqa: E402
from ledger.checkpoints import active_key, checkpoint_sign, vkey_of  # noqa: E402
from ledger.export import bundle_write  # noqa: E402
from ledger.log_models import LogLeaf  # noqa: E402
from ledger.models import Event, RunCounter  # noqa: E402
from ledger.sequencer import log_for_org, sequence_all  # noqa: E402
from ledger.services import event_hash  # noqa: E402
from ledger.tree import TILES, TreeReader  # noqa: E402

PYTHON = sys.executable


def make_org(runs: int):
    org = bench_org(slug=f"bench-{int(time.time() * 1000)}", policy=READ_POLICY, bundle=READ_BUNDLE)
    return org, [created.run.pk for created in bench_runs(org, runs)]


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def load() -> float:
    return os.getloadavg()[0]


@dataclass
class Round:
    mode: str
    rate: float  # appends/s, wall clock
    load: float  # 1-minute load average at the end
    append_cpu: float  # s per append: this process + its PostgreSQL backends
    sequencer_cpu: float | None = None  # s per event: the sequencer + its backend
    sequencer_python: float | None = None  # s per event: the sequencer's process alone


def hammer(run_ids: list, total: int, threads: int) -> tuple[float, float]:
    """`total` appends from `threads` threads; (appends/s, CPU s per append)."""
    per_thread = total // threads
    backends_cpu: list[float] = []

    def work(offset: int) -> None:
        pid = backend_pid()
        started = cpu_seconds(pid)
        append_events(run_ids, offset, per_thread)
        backends_cpu.append(cpu_seconds(pid) - started)
        connections.close_all()

    workers = [threading.Thread(target=work, args=(n * 7,)) for n in range(threads)]
    cpu = time.process_time()
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu + sum(backends_cpu)
    return per_thread * threads / seconds, cpu / (per_thread * threads)


def wait_for_a_round(started_after) -> None:
    from ledger.log_models import SequencerState

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if SequencerState.objects.filter(updated_at__gt=started_after).exists():
            return
        time.sleep(0.2)
    raise SystemExit("the sequencer never completed a round")


def wait_until_sequenced(org) -> None:
    deadline = time.monotonic() + 600
    events = Event.objects.filter(run__org=org).count()
    while log_for_org(org).size < events:
        if time.monotonic() > deadline:
            raise SystemExit("the sequencer did not catch up")
        time.sleep(0.1)


class Sequencer:
    """`manage.py ledger sequence`, the worker's own loop, in its own process; its CPU and
    its PostgreSQL backend's CPU are read from /proc."""

    APP = "fluidbox-bench-sequencer"

    def __init__(self, every_events: int) -> None:
        env = dict(os.environ, PGAPPNAME=self.APP)
        env["FLUIDBOX_CHECKPOINT_EVERY_EVENTS"] = str(every_events)
        started = timezone.now()
        self.process = subprocess.Popen(
            [PYTHON, "manage.py", "ledger", "sequence", "--seconds", "3600"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_a_round(started_after=started)  # started up and ticking
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s", [self.APP]
            )
            pids = [pid for (pid,) in cursor.fetchall()]
        if len(pids) != 1:
            raise SystemExit(f"expected one sequencer backend, found {pids}")
        self.backend = pids[0]

    def cpu(self) -> tuple[float, float]:
        """(its own CPU, its backend's CPU), in seconds."""
        return cpu_seconds(self.process.pid), cpu_seconds(self.backend)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


def appends_on_vs_off(total: int, threads: int, rounds: int, every_events: int) -> None:
    print(
        f"\n== appends/s, {threads} threads, {total} events over 100 runs per round, "
        f"{rounds} rounds of each, a checkpoint every {every_events} events =="
    )
    org, run_ids = make_org(100)
    sequence_all()  # start from an up-to-date log
    connections.close_all()
    results: list[Round] = []
    for round_number in range(rounds):
        for mode in ("off", "on") if round_number % 2 == 0 else ("on", "off"):
            if mode == "off":
                rate, append_cpu = hammer(run_ids, total, threads)
                results.append(Round(mode, rate, load(), append_cpu))
                sequence_all()  # the backlog is not the next round's work
                connections.close_all()
            else:
                worker = Sequencer(every_events)
                before = worker.cpu()
                rate, append_cpu = hammer(run_ids, total, threads)
                # Its CPU until it has sequenced this round's events, per event.
                wait_until_sequenced(org)
                after = worker.cpu()
                worker.stop()
                python, database = ((a - b) / total for a, b in zip(after, before, strict=True))
                results.append(Round(mode, rate, load(), append_cpu, python + database, python))
            last = results[-1]
            extra = (
                f", sequencer {last.sequencer_cpu * 1e6:3.0f} us/event, "
                f"{last.sequencer_python * 1e6:3.0f} of them in Python"
                if last.sequencer_cpu is not None
                else ""
            )
            print(
                f"round {round_number + 1} checkpointing {mode:>3}: {rate:5.0f} appends/s "
                f"(load {last.load:4.1f}; appends {append_cpu * 1e6:4.0f} us CPU each{extra})"
            )
    summarize(results)
    checkpoint_sign(log=log_for_org(org))
    print(f"(the log now has {log_for_org(org).size} leaves)")


def summarize(results: list[Round]) -> None:
    off = [r.rate for r in results if r.mode == "off"]
    on = [r.rate for r in results if r.mode == "on"]
    pairs = []  # each round's on/off, the two measured back to back
    for first, second in zip(results[::2], results[1::2], strict=True):
        on_round, off_round = (first, second) if first.mode == "on" else (second, first)
        pairs.append(on_round.rate / off_round.rate)
    median_off, median_on = statistics.median(off), statistics.median(on)
    print(
        f"wall: median off {median_off:.0f}/s, on {median_on:.0f}/s -> "
        f"on is {100 * median_on / median_off:.1f}% of off; each round's on/off: "
        + ", ".join(f"{100 * ratio:.0f}%" for ratio in pairs)
        + f" (median {100 * statistics.median(pairs):.1f}%)"
    )
    append_cpu = statistics.median(r.append_cpu for r in results)
    sequencer_cpu = statistics.median(r.sequencer_cpu for r in results if r.mode == "on")
    print(
        f"CPU: an append costs {append_cpu * 1e6:.0f} us (this process and its backends), "
        f"the sequencer {sequencer_cpu * 1e6:.0f} us per event (process and backend, "
        f"checkpoints included): on a machine whose CPUs are the limit, on would be "
        f"{100 * append_cpu / (append_cpu + sequencer_cpu):.1f}% of off"
    )
    loads = [r.load for r in results]
    print(f"load average during the rounds: {min(loads):.1f} to {max(loads):.1f}")


def bulk_events(run_ids: list, total: int) -> None:
    """`total` valid, chained events written with COPY (PostgreSQL) or bulk_create: the
    proof and verifier figures need a big log, not the append path."""
    per_run = total // len(run_ids)
    at = timezone.now()
    table = Event._meta.db_table
    columns = ["run_id", "seq", "type", "at", "data", "prev_hash", "hash"]
    started = time.perf_counter()
    for run_id in run_ids:
        prev = Event.objects.get(run_id=run_id, seq=1).hash
        rows = []
        for seq in range(2, per_run + 2):
            data = {"tool": "read_file", "decision": "allow", "i": seq, "digest": "0" * 64}
            digest = event_hash(
                prev_hash=prev, run_id=run_id, seq=seq, type="tool.decision", at=at, data=data
            )
            rows.append((run_id, seq, "tool.decision", at, data, prev, digest))
            prev = digest
        if connection.vendor == "postgresql":
            import json

            with (
                connection.cursor() as cursor,
                cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
            ):
                for run, seq, type_, when, data, prev_hash, digest in rows:
                    copy.write_row((run, seq, type_, when, json.dumps(data), prev_hash, digest))
        else:
            Event.objects.bulk_create(
                [Event(**dict(zip(columns, row, strict=True))) for row in rows], batch_size=2000
            )
        RunCounter.objects.filter(run_id=run_id).update(last_seq=per_run + 1, last_hash=prev)
    print(f"wrote {per_run * len(run_ids)} events in {time.perf_counter() - started:.0f} s")


def percentiles(samples: list[float]) -> str:
    p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
    return f"p50 {p50 * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms, max {max(samples) * 1000:.2f} ms"


class QueryCounter:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


def inclusion_proofs(log, checkpoint, events: dict, leaves: list[int], *, cold: bool) -> None:
    """Proofs as the API builds them: the event's leaf read with its tile, then the audit
    path from a fresh reader. `cold`: this process's tile cache emptied before each one."""
    walls, cpus, counter = [], [], QueryCounter()
    backend = backend_pid()
    database = cpu_seconds(backend)
    with connection.execute_wrapper(counter):
        for index in leaves:
            if cold:
                TILES.clear()
            started, cpu = time.perf_counter(), time.thread_time()
            tree = TreeReader(log, checkpoint.tree_size)
            leaf_index, _ = tree.leaf_of_event(events[index])
            tree.inclusion(leaf_index)
            cpus.append(time.thread_time() - cpu)
            walls.append(time.perf_counter() - started)
    database = (cpu_seconds(backend) - database) / len(leaves)
    label = "every tile from the database" if cold else "as served (tile cache warm)"
    print(
        f"inclusion proof, {label}: wall {percentiles(walls)}; CPU here {percentiles(cpus)}, "
        f"PostgreSQL {database * 1000:.2f} ms each on average; "
        f"{counter.count / len(leaves):.2f} queries each ({len(leaves)} proofs, load {load():.1f})"
    )


def api_requests(org, log, checkpoint, events: dict, leaves: list[int]) -> None:
    """The whole endpoint, in process (no HTTP server): key check, run access, event,
    checkpoint, proof, JSON."""
    from django.test import Client

    from governance.services.orgs import api_key_create

    key = api_key_create(org=org, name=f"bench-{time.time()}").plaintext
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    rows = dict(Event.objects.filter(pk__in=events.values()).values_list("pk", "run_id"))
    seqs = dict(Event.objects.filter(pk__in=events.values()).values_list("pk", "seq"))
    walls, counter = [], QueryCounter()
    with connection.execute_wrapper(counter):
        for index in leaves:
            event_id = events[index]
            started = time.perf_counter()
            response = client.get(
                "/v1/ledger/proofs/inclusion",
                {"run": str(rows[event_id]), "seq": seqs[event_id]},
            )
            walls.append(time.perf_counter() - started)
            assert response.status_code == 200, response.content
    print(
        f"GET /v1/ledger/proofs/inclusion (Django test client, no HTTP): wall "
        f"{percentiles(walls)}; {counter.count / len(leaves):.1f} queries each"
    )


def big_log(total: int, proofs: int) -> None:
    print(f"\n== a log of {total} events (load {load():.1f}) ==")
    runs = max(1, total // 1000)
    org, run_ids = make_org(runs)
    bulk_events(run_ids, total - runs)
    pid = backend_pid()
    started, cpu, db_cpu = time.perf_counter(), time.process_time(), cpu_seconds(pid)
    sequence_all()
    seconds = time.perf_counter() - started
    cpu, db_cpu = time.process_time() - cpu, cpu_seconds(pid) - db_cpu
    log = log_for_org(org)
    print(
        f"sequenced {log.size} leaves in {seconds:.0f} s ({log.size / seconds:.0f} leaves/s); "
        f"CPU {cpu / log.size * 1e6:.1f} us per leaf here and {db_cpu / log.size * 1e6:.1f} us "
        f"in PostgreSQL (load {load():.1f})"
    )
    started = time.perf_counter()
    checkpoint = checkpoint_sign(log=log)
    print(
        f"signed the checkpoint of size {checkpoint.tree_size} in "
        f"{(time.perf_counter() - started) * 1000:.0f} ms"
    )
    leaves = random.Random(1).sample(range(checkpoint.tree_size), proofs)
    events = dict(
        LogLeaf.objects.filter(log=log, index__in=leaves).values_list("index", "event_id")
    )
    TILES.clear()
    inclusion_proofs(log, checkpoint, events, leaves[:200], cold=False)  # warm up
    inclusion_proofs(log, checkpoint, events, leaves, cold=False)
    inclusion_proofs(log, checkpoint, events, leaves, cold=True)
    api_requests(org, log, checkpoint, events, leaves[: max(1, proofs // 4)])
    consistency = []
    for first in random.Random(2).sample(range(1, checkpoint.tree_size), 200):
        started = time.perf_counter()
        TreeReader(log, checkpoint.tree_size).consistency(first)
        consistency.append(time.perf_counter() - started)
    print(f"consistency proof (tile cache warm): wall {percentiles(consistency)}")
    with tempfile.TemporaryDirectory() as folder:
        bundle = Path(folder) / "bundle.jsonl"
        started = time.perf_counter()
        with bundle.open("w", encoding="utf-8") as out:
            exported = bundle_write(log=log, out=out)
        seconds = time.perf_counter() - started
        size = bundle.stat().st_size / 2**20
        print(
            f"export: {exported.events} events, {size:.0f} MiB in {seconds:.0f} s "
            f"({exported.events / seconds:.0f} events/s)"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO", "DATABASE"))}
        started = time.perf_counter()
        result = subprocess.run(
            [PYTHON, "-m", "ledger.verify", str(bundle), "--public-key", vkey_of(active_key(log))],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
        print(
            f"offline verify: exit {result.returncode} in {seconds:.0f} s "
            f"({exported.events / seconds:.0f} events/s, load {load():.1f})"
        )
        print((result.stdout or result.stderr).strip()[:300])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--proofs", type=int, default=2000)
    parser.add_argument("--append-events", type=int, default=8000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument(
        "--checkpoint-every-events",
        type=int,
        default=settings.FLUIDBOX_CHECKPOINT_EVERY_EVENTS,
        help="the sequencer's cadence in the on rounds (default: the setting, 1000)",
    )
    parser.add_argument("--skip-appends", action="store_true")
    parser.add_argument("--skip-big-log", action="store_true")
    args = parser.parse_args()
    migrate()
    print(f"database: {connection.vendor}; {os.cpu_count()} CPUs; load average {load():.1f}")
    if connection.vendor != "postgresql":
        raise SystemExit("this bench reads PostgreSQL backends' CPU: give a postgres DATABASE_URL")
    if not args.skip_appends:
        appends_on_vs_off(
            args.append_events, args.threads, args.rounds, args.checkpoint_every_events
        )
    if not args.skip_big_log:
        big_log(args.events, args.proofs)


if __name__ == "__main__":
    main()
