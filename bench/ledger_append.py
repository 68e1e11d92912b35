"""Ledger appends per second, on one hot run and spread over 100 runs.

Uses whatever DATABASE_URL points at (SQLite when unset). Creates a throwaway org and
runs in that database; run it against a scratch database.

    DATABASE_URL=postgres://… .venv/bin/python bench/ledger_append.py [--events 4000] [--threads 8]
"""

import argparse
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fluidbox.settings")
os.environ.setdefault("FLUIDBOX_DEVELOPMENT", "1")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, connections, transaction  # noqa: E402

from governance.services.bundles import bundle_import  # noqa: E402
from governance.services.orgs import org_create  # noqa: E402
from governance.services.policies import policy_save  # noqa: E402
from governance.services.runs import run_create  # noqa: E402
from ledger.redaction import redact  # noqa: E402
from ledger.services import chain_verify, event_append  # noqa: E402

POLICY = 'name: bench\nrules:\n  - {pattern: "read_file:*", action: ALWAYS}\n'
BUNDLE = "name: bench\ntools:\n  - {name: read_file, access: read}\n"


def make_runs(count: int) -> list:
    org = org_create(slug=f"bench-{int(time.time() * 1000)}")
    policy_save(org=org, text=POLICY, author=None)
    bundle_import(org=org, text=BUNDLE)
    return [
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
        for _ in range(count)
    ]


def hammer(run_ids: list, per_thread: int, threads: int) -> float:
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
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=4000)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
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
