"""Ledger appends per second, on one hot run and spread over 100 runs.

Uses whatever DATABASE_URL points at (SQLite when unset). Creates a throwaway org and
runs in that database; run it against a scratch database.

    DATABASE_URL=postgres://… .venv/bin/python bench/ledger_append.py [--events 4000] [--threads 8]
"""

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.harness import (  # noqa: E402
    READ_BUNDLE,
    READ_POLICY,
    bench_org,
    bench_runs,
    django_setup,
    migrate,
)

django_setup()

from django.db import connection, connections, transaction  # noqa: E402

from ledger.chain_checks import chain_verify  # noqa: E402
from ledger.redaction import redact  # noqa: E402
from ledger.services import event_append  # noqa: E402


def make_runs(count: int) -> list:
    org = bench_org(slug=f"bench-{int(time.time() * 1000)}", policy=READ_POLICY, bundle=READ_BUNDLE)
    return [created.run.pk for created in bench_runs(org, count)]


def append_events(run_ids: list, offset: int, count: int) -> None:
    """`count` appends, each in its own transaction, taking the runs in turn from `offset`."""
    for index in range(count):
        run_id = run_ids[(offset + index) % len(run_ids)]
        with transaction.atomic():
            event_append(
                run_id=run_id,
                type="tool.requested",
                redacted=redact({"tool": "read_file", "i": index, "digest": "0" * 64}),
            )


def hammer(run_ids: list, per_thread: int, threads: int) -> float:
    def work(offset: int) -> None:
        append_events(run_ids, offset, per_thread)
        connections.close_all()

    workers = [threading.Thread(target=work, args=(n * 7,)) for n in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=4000)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    migrate()
    per_thread = args.events // args.threads
    total = per_thread * args.threads
    print(f"database: {connection.vendor}  events: {total}  threads: {args.threads}")
    for label, count in (("one hot run", 1), ("spread over 100 runs", 100)):
        run_ids = make_runs(count)
        connections.close_all()
        seconds = hammer(run_ids, per_thread, args.threads)
        broken = sum(len(chain_verify(run_id)) for run_id in run_ids)
        rate = total / seconds
        print(f"{label:>22}: {rate:8.0f} appends/s  ({seconds:.2f} s, chain breaks: {broken})")


if __name__ == "__main__":
    main()
