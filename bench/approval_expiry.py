"""How late an unattended approval is settled after it expires, with the worker running.

Uses whatever DATABASE_URL points at (SQLite in FLUIDBOX_DATA_DIR when unset): it migrates
it, creates a throwaway org whose policy asks with `approval_timeout: 2`, starts
`manage.py qcluster`, then creates `--approvals` paused calls a little apart and nobody
waits on them or decides them. For each it prints how long after `expires_at` the row was
settled as `timed_out` (`decided_at - expires_at`, both stamped by the database's clock on
this machine).

    FLUIDBOX_DATA_DIR=/tmp/ae .venv/bin/python bench/approval_expiry.py
    DATABASE_URL=postgres://… .venv/bin/python bench/approval_expiry.py --approvals 40
    # the mechanism it replaced, for comparison: django-q2 Schedule rows
    FLUIDBOX_DATA_DIR=/tmp/ae .venv/bin/python bench/approval_expiry.py --via-schedule
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import bench_org, bench_runs, django_setup, migrate, percentile  # noqa: E402

django_setup()

from django.db import close_old_connections, connection  # noqa: E402
from django_q.models import Schedule, Success  # noqa: E402
from django_q.tasks import async_task  # noqa: E402

import governance.queue  # noqa: E402
from governance.models import Approval  # noqa: E402
from governance.services.gate import permission_request  # noqa: E402

POLICY = 'name: bench\napproval_timeout: 2\nrules:\n  - {pattern: "send_email:*", action: ASK}\n'
BUNDLE = "name: bench\ntools:\n  - {name: send_email, access: write}\n"


def schedule_row(due_at, func, *args, **kwargs) -> None:
    """The old way: a one-off django-q2 Schedule row, read by the scheduler every ~30 s."""
    Schedule.objects.create(
        func=func,
        args=",".join(repr(a) for a in args),
        schedule_type=Schedule.ONCE,
        repeats=-1,
        next_run=due_at,
    )


def wait_for_worker(deadline: float) -> None:
    probe = async_task("math.floor", 1.5)
    while time.monotonic() < deadline:
        if Success.objects.filter(id=probe).exists():
            return
        time.sleep(0.1)
    raise SystemExit("the worker did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--approvals", type=int, default=20)
    parser.add_argument("--spacing", type=float, default=0.37, help="seconds between calls")
    parser.add_argument("--via-schedule", action="store_true")
    args = parser.parse_args()
    migrate()
    if args.via_schedule:
        governance.queue.task_enqueue_at = schedule_row
    org = bench_org(slug=f"bench-expiry-{int(time.time() * 1000)}", policy=POLICY, bundle=BUNDLE)
    run = bench_runs(org, 1)[0].run
    log = open(ROOT / "var" / "bench-qcluster.log", "ab")  # noqa: SIM115
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for_worker(time.monotonic() + 60)
        ids = []
        for index in range(args.approvals):
            answer = permission_request(
                run=run,
                session_id="bench",
                tool_call_id=f"c-{index}",
                tool="send_email",
                arguments={"to": f"x{index}@example.com"},
            )
            ids.append(answer.approval.pk)
            time.sleep(args.spacing)
        close_old_connections()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if not Approval.objects.filter(pk__in=ids, status="pending").exists():
                break
            time.sleep(0.2)
        rows = Approval.objects.filter(pk__in=ids).values_list("status", "expires_at", "decided_at")
        late = sorted(
            (decided - expires).total_seconds() for status, expires, decided in rows if decided
        )
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    unsettled = len(ids) - len(late)
    mechanism = "Schedule rows" if args.via_schedule else "due-at queue rows"
    print(f"database: {connection.vendor}  mechanism: {mechanism}  approvals: {len(ids)}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    if late:
        p90 = percentile(late, 0.9)
        print(
            f"settled after expiry, seconds: median {statistics.median(late):.2f}  "
            f"p90 {p90:.2f}  max {late[-1]:.2f}  min {late[0]:.2f}"
        )
    print(f"still pending after 2 minutes: {unsettled}")


if __name__ == "__main__":
    main()
