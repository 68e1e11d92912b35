"""The auditor's ledger: appends/s with the sequencer signing checkpoints vs without it,
inclusion-proof time in a 10^6-event log, and the offline verifier's throughput.

    DATABASE_URL=postgres://postgres@127.0.0.1:55432/fb_bench .venv/bin/python \\
        bench/ledger_checkpoints.py [--events 1000000] [--append-events 8000] [--rounds 3]

Run it against a scratch database: it migrates it and fills it with a throwaway org.
"""

import argparse
import io
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fluidbox.settings")
os.environ.setdefault("FLUIDBOX_DEVELOPMENT", "1")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, connections, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from governance.services.bundles import bundle_import  # noqa: E402
from governance.services.orgs import org_create  # noqa: E402
from governance.services.policies import policy_save  # noqa: E402
from governance.services.runs import run_create  # noqa: E402
from ledger.checkpoints import active_key, checkpoint_sign, vkey_of  # noqa: E402
from ledger.export import bundle_write  # noqa: E402
from ledger.log_models import LogLeaf  # noqa: E402
from ledger.models import Event, RunCounter  # noqa: E402
from ledger.redaction import redact  # noqa: E402
from ledger.sequencer import log_for_org, sequence, sequence_all  # noqa: E402
from ledger.services import event_append, event_hash  # noqa: E402
from ledger.tree import TreeReader  # noqa: E402

POLICY = 'name: bench\nrules:\n  - {pattern: "read_file:*", action: ALWAYS}\n'
BUNDLE = "name: bench\ntools:\n  - {name: read_file, access: read}\n"
PYTHON = sys.executable


def make_org(runs: int):
    org = org_create(slug=f"bench-{int(time.time() * 1000)}")
    policy_save(org=org, text=POLICY, author=None)
    bundle_import(org=org, text=BUNDLE)
    ids = [
        run_create(
            org=org,
            agent="bench",
            policy_name="bench",
            autonomy="supervised",
            source={"kind": "manual"},
            budget_tokens=1,
            bundles=["bench"],
            connections=[],
        ).run.pk
        for _ in range(runs)
    ]
    return org, ids


def hammer(run_ids: list, total: int, threads: int) -> float:
    per_thread = total // threads

    def work(offset: int) -> None:
        for index in range(per_thread):
            run_id = run_ids[(offset + index) % len(run_ids)]
            with transaction.atomic():
                event_append(
                    run_id=run_id,
                    type="tool.requested",
                    redacted=redact({"tool": "read_file", "i": index, "digest": "0" * 64}),
                )
        connections.close_all()

    workers = [threading.Thread(target=work, args=(n * 7,)) for n in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return per_thread * threads / (time.perf_counter() - started)


def wait_for_a_round(started_after) -> None:
    from ledger.log_models import SequencerState

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if SequencerState.objects.filter(updated_at__gt=started_after).exists():
            return
        time.sleep(0.2)
    raise SystemExit("the sequencer never completed a round")


def appends_on_vs_off(total: int, threads: int, rounds: int) -> None:
    print(f"\n== appends/s, {threads} threads, {total} events over 100 runs, per round ==")
    org, run_ids = make_org(100)
    sequence()  # start from an up-to-date log
    connections.close_all()
    results: dict[str, list[float]] = {"off": [], "on": []}
    for round_number in range(rounds):
        for mode in ("off", "on") if round_number % 2 == 0 else ("on", "off"):
            worker = None
            if mode == "on":
                # The worker's own loop, as `manage.py qcluster` runs it, with the default
                # cadence: a checkpoint every 1,000 events or 60 s, whichever first.
                env = dict(os.environ)
                worker = subprocess.Popen(
                    [PYTHON, "manage.py", "ledger", "sequence", "--seconds", "3600"],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                wait_for_a_round(started_after=timezone.now())  # started up and ticking
            rate = hammer(run_ids, total, threads)
            if worker is not None:
                worker.terminate()
                worker.wait()
            results[mode].append(rate)
            print(f"round {round_number + 1} checkpointing {mode:>3}: {rate:7.0f} appends/s")
    off, on = statistics.median(results["off"]), statistics.median(results["on"])
    print(f"median: off {off:.0f}/s, on {on:.0f}/s -> on is {100 * on / off:.1f}% of off")
    while sequence() is None:  # a stopped sequencer's session may still hold the lock
        time.sleep(0.2)
    checkpoint_sign(log=log_for_org(org))
    print(f"(the log now has {log_for_org(org).size} leaves)")


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


def big_log(total: int) -> None:
    print(f"\n== a log of {total} events ==")
    runs = max(1, total // 1000)
    org, run_ids = make_org(runs)
    bulk_events(run_ids, total - runs)
    started = time.perf_counter()
    sequence_all()
    log = log_for_org(org)
    print(f"sequenced {log.size} leaves in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    checkpoint = checkpoint_sign(log=log)
    print(
        f"signed the checkpoint of size {checkpoint.tree_size} in "
        f"{(time.perf_counter() - started) * 1000:.0f} ms"
    )
    # Inclusion proofs as the API builds them: the event's leaf, then the audit path from
    # a fresh reader (no tile cached from the previous proof).
    samples = []
    leaves = random.Random(1).sample(range(checkpoint.tree_size), 2000)
    events = dict(
        LogLeaf.objects.filter(log=log, index__in=leaves).values_list("index", "event_id")
    )
    for index in leaves:
        started = time.perf_counter()
        leaf = LogLeaf.objects.get(event_id=events[index])
        TreeReader(log.pk, checkpoint.tree_size).inclusion(leaf.index)
        samples.append(time.perf_counter() - started)
    samples.sort()
    p50, p99 = samples[len(samples) // 2], samples[int(len(samples) * 0.99)]
    print(
        f"inclusion proof at {checkpoint.tree_size} leaves: p50 {p50 * 1000:.2f} ms, "
        f"p99 {p99 * 1000:.2f} ms, max {samples[-1] * 1000:.2f} ms ({len(samples)} proofs)"
    )
    consistency = []
    for first in random.Random(2).sample(range(1, checkpoint.tree_size), 200):
        started = time.perf_counter()
        TreeReader(log.pk, checkpoint.tree_size).consistency(first)
        consistency.append(time.perf_counter() - started)
    consistency.sort()
    print(
        f"consistency proof: p50 {consistency[100] * 1000:.2f} ms, "
        f"p99 {consistency[198] * 1000:.2f} ms"
    )
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
            f"({exported.events / seconds:.0f} events/s)"
        )
        print((result.stdout or result.stderr).strip()[:300])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--append-events", type=int, default=8000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-appends", action="store_true")
    parser.add_argument("--skip-big-log", action="store_true")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}")
    if not args.skip_appends:
        appends_on_vs_off(args.append_events, args.threads, args.rounds)
    if not args.skip_big_log:
        big_log(args.events)


if __name__ == "__main__":
    _ = io
    main()
