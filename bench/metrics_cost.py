"""What metrics add to one gate decision, in CPU, without the machine's noise.

Throughput side by side (`observability_load.py`) moves by several points from run to run on
a shared machine, more than metrics cost. This script times the metric updates one new
ALWAYS decision over REST makes, exactly as the code makes them, in multiprocess mode as
gunicorn runs them (one `fluidbox_gate_decisions_total` increment and a decision-time
observation, two ledger events counted, the request's count and duration through
`RequestMetricsMiddleware`), `--calls` times, and prints the CPU per decision next to what
`gate_profile.py` measures a whole decision at.

    .venv/bin/python bench/metrics_cost.py [--calls 200000]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    os.environ["FLUIDBOX_METRICS"] = "1"
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="metrics-cost-")
    from bench.harness import django_setup, load_average

    django_setup()
    from django.test import RequestFactory

    from governance.observability import metrics
    from governance.observability.endpoint import RequestMetricsMiddleware

    request = RequestFactory().post("/v1/runs/x/permission")

    class Resolved:
        route = "v1/runs/<str:run_id>/permission"

    request.resolver_match = Resolved()
    response = type("Response", (), {"status_code": 200})()
    middleware = RequestMetricsMiddleware(lambda request: response)
    event_types = ("tool.requested", "tool.decision")

    def one_decision() -> None:
        metrics.gate_decision_recorded(decision="allow", source="policy", seconds=0.0021)
        metrics.ledger_events_appended(event_types)  # autocommit: counted at once

    def one_request() -> None:
        middleware(request)

    print(f"{args.calls} decisions per round, load average {load_average()}")
    best = None
    for round_ in range(args.rounds):
        started = time.process_time()
        for _ in range(args.calls):
            one_decision()
            one_request()
        per_call = (time.process_time() - started) / args.calls * 1e6
        best = per_call if best is None else min(best, per_call)
        print(f"  round {round_ + 1}: {per_call:6.1f} µs of CPU per decision", flush=True)
    print(f"best round: {best:.1f} µs per decision")


if __name__ == "__main__":
    main()
