"""What observability costs the gate: decisions per second with metrics off, with metrics on,
and with metrics on and every span exported to an OTLP receiver on the loopback, side by side.

Three gunicorn servers (fluidbox/gunicorn_conf.py, production settings, 2 workers each) run
at once on one throwaway PostgreSQL database (as bench/gate_load.py makes it), differing only
in their environment:

- off:     FLUIDBOX_METRICS=0 (no metric is recorded, no middleware)
- metrics: the default (prometheus_client multiprocess files, request metrics, /metrics)
- tracing: metrics, and OTEL_TRACES_EXPORTER=otlp to a receiver in a process of its own that
           keeps every batch and, at the end, decodes them (opentelemetry-proto) to count the
           spans: decoding as they come would spend, on the same two CPUs, time that is the
           collector's and not fluidbox's

wrk (bench/gate_load.lua, the ALWAYS scenario: every request a new decision) loads one server
at a time; the three take turns for `--rounds` rounds so that what slows the machine over
time falls on all of them alike. Reported: the median decisions/s per configuration, its
share of "off", the gunicorn workers' CPU per request (less moved by other load) and
PostgreSQL's (one server is loaded at a time, so a round's database CPU is its own).

    DATABASE_URL=postgres://postgres@127.0.0.1:55432/fluidbox_bench \\
        .venv/bin/python bench/observability_load.py [--rounds 5] [--seconds 8] [--conns 16]
"""

import argparse
import os
import secrets
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import gate_load, harness  # noqa: E402

CONFIGS = ("off", "metrics", "tracing")
TARGETS = {"metrics": 0.95, "tracing": 0.85}


def environments(base: dict, workdir: Path, receiver: harness.OtlpReceiverProcess) -> dict:
    metrics = {"FLUIDBOX_METRICS": "1", "FLUIDBOX_METRICS_TOKEN": secrets.token_hex(16)}
    traced = {
        **metrics,
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.endpoint,
        "OTEL_SERVICE_NAME": "fluidbox-bench",
        # A queue deep enough that no span is dropped at this rate: every one is exported.
        "OTEL_BSP_MAX_QUEUE_SIZE": "200000",
    }
    envs = {
        "off": {**base, "FLUIDBOX_METRICS": "0"},
        "metrics": {**base, **metrics},
        "tracing": {**base, **traced},
    }
    for name in ("metrics", "tracing"):
        directory = workdir / f"prometheus-{name}"
        directory.mkdir()
        envs[name]["PROMETHEUS_MULTIPROC_DIR"] = str(directory)
    for name in ("off", "metrics"):  # whatever this shell exports, these two trace nothing
        for key in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"):
            envs[name].pop(key, None)
        envs[name].pop("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", None)
    return envs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--conns", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("WEB_THREADS", "128")))
    parser.add_argument("--wrk-threads", type=int, default=1)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install -y wrk")

    database_url = harness.throwaway_database(os.environ.get("DATABASE_URL", ""))
    workdir = Path(tempfile.mkdtemp(prefix="observability-load-"))
    base = harness.production_environment(database_url, workdir)
    base.pop("PROMETHEUS_MULTIPROC_DIR", None)
    os.environ.update({k: v for k, v in base.items() if k != "PROMETHEUS_MULTIPROC_DIR"})
    os.environ["FLUIDBOX_METRICS"] = "0"  # the seeding in this process counts nothing
    runs_file = workdir / "runs.txt"
    gate_load.seed(args.runs, runs_file)

    receiver = harness.OtlpReceiverProcess()
    envs = environments(base, workdir, receiver)
    servers = {}
    try:
        for name in CONFIGS:
            servers[name] = harness.Gunicorn(
                envs[name], args.workers, args.threads, workdir / f"{name}.log", runs_file
            )
        print(
            f"gunicorn gthread {args.workers} workers x {args.threads} threads per server, "
            f"PostgreSQL {harness.server_version(database_url)}, {args.runs} runs, "
            f"wrk -c{args.conns}, {args.rounds} rounds of {args.seconds:g} s, "
            f"{os.cpu_count()} CPUs shared by all",
            flush=True,
        )
        print(f"  load average at start: {harness.load_average()}", flush=True)
        warm_up = {}
        for name in CONFIGS:
            warm_up[name], _ = gate_load.wrk(
                servers[name], "always", connections=8, seconds=2, threads=args.wrk_threads
            )
        results: dict[str, list] = {name: [] for name in CONFIGS}
        for round_ in range(args.rounds):
            for name in CONFIGS:
                result, nonce = gate_load.wrk(
                    servers[name],
                    "always",
                    connections=args.conns,
                    seconds=args.seconds,
                    threads=args.wrk_threads,
                )
                gate_load.check_recorded("always", nonce, result)
                results[name].append(result)
                print(
                    f"    round {round_ + 1} {name:<8} {result.rate:8.1f}/s  "
                    f"p50 {result.p50_ms:6.1f} ms  p99 {result.p99_ms:7.1f} ms  "
                    f"worker CPU {result.cpu_ms:5.2f} ms/req  "
                    f"PostgreSQL CPU {gate_load._ms(result.database_cpu_ms)} ms/req",
                    flush=True,
                )
        print(f"  load average at end: {harness.load_average()}", flush=True)
        # The warm-up's requests were traced too.
        traced_requests = warm_up["tracing"].requests + sum(
            result.requests for result in results["tracing"]
        )
    finally:
        for server in servers.values():  # a worker flushes its batch processor as it stops
            server.stop()
        spans = receiver.stop()
        harness.drop_database(database_url)
        shutil.rmtree(workdir, ignore_errors=True)
    report(results, spans, traced_requests)


def report(results: dict[str, list], spans: int, traced_requests: int) -> None:
    off_rate = statistics.median(result.rate for result in results["off"])
    off_cpu = statistics.median(result.cpu_ms for result in results["off"])
    print()
    print(
        f"{'configuration':<14} {'median/s':>9} {'of off':>7} {'target':>7} "
        f"{'CPU ms/req':>10} {'CPU of off':>10} {'PG ms/req':>9} {'p99 ms':>7}"
    )
    verdicts = []
    for name in CONFIGS:
        rate = statistics.median(result.rate for result in results[name])
        cpu = statistics.median(result.cpu_ms for result in results[name])
        p99 = statistics.median(result.p99_ms for result in results[name])
        database = [r.database_cpu_ms for r in results[name] if r.database_cpu_ms is not None]
        database_cpu = statistics.median(database) if database else None
        share = rate / off_rate
        target = TARGETS.get(name)
        if target is not None:
            verdicts.append((name, share >= target))
        print(
            f"{name:<14} {rate:9.1f} {share:7.0%} "
            f"{(f'>= {target:.0%}' if target else ''):>7} {cpu:10.2f} {off_cpu / cpu:10.0%} "
            f"{gate_load._ms(database_cpu):>9} {p99:7.1f}"
        )
    print(
        f"spans received by the loopback receiver: {spans} "
        f"(~{spans / max(1, traced_requests):.1f} per traced request)"
    )
    print("targets: " + ", ".join(f"{name} {'MET' if met else 'MISSED'}" for name, met in verdicts))


if __name__ == "__main__":
    main()
