"""Gate decisions per second under load, next to the stack's own ceiling.

Runs the server as in production — gunicorn with fluidbox/gunicorn_conf.py (gthread) and the
production settings, on PostgreSQL — in a throwaway database created next to the one
DATABASE_URL names (`<name>_gate_load`, migrated from scratch, dropped at the end). wrk
(`apt-get install wrk`) drives it with bench/gate_load.lua: every request is a NEW decision
(fresh tool_call_id), rotating over the session tokens of `--runs` runs.

Scenarios: an ALWAYS decision, a NEVER decision, a 20-segment shell command (every segment
matched), and `/bench/ceiling` — a bare DRF endpoint in the same gunicorn doing one
transaction (lock a counter row, insert 3 rows). Each is measured flat out at several
connection counts (the best is its peak), then paced at half of its peak for p99. Last, the
peak RSS (VmHWM) of every server process.

    DATABASE_URL=postgres://postgres@127.0.0.1:55433/fluidbox_bench \\
        .venv/bin/python bench/gate_load.py [--runs 100] [--seconds 8] [--conns 8,16,32,64]
"""

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    BIN,
    SANDBOX_BUNDLE,
    Gunicorn,
    bench_org,
    bench_runs,
    cpu_seconds,
    drop_database,
    free_port,  # noqa: F401  (bench/broker_profile.py imports it from here)
    load_average,
    memory_kib,
    migrate,
    production_environment,
    runs_write,
    server_version,
    throwaway_database,
)

LUA = ROOT / "bench" / "gate_load.lua"
SCENARIOS = (
    ("ceiling", "bare DRF ceiling"),
    ("always", "ALWAYS (read_file)"),
    ("never", "NEVER (rm -rf)"),
    ("shell20", "20-segment shell"),
)
EXPECTED = {"always": "allow", "never": "deny", "shell20": "allow"}
TARGET_SHARE = 0.60
PACING_ATTEMPTS = 6  # at half load, closed loop: up to 3 short probes, then measured runs
TARGET_P99_MS = 50.0

POLICY = """
name: bench
autonomous_fallback: deny
rules:
  - {pattern: "read_file:/workspace/*", action: ALWAYS}
  - {pattern: "read_file:*", action: NEVER}
  - {pattern: "run_command:rm *", action: NEVER}
  - {pattern: "run_command:git status", action: ALWAYS}
  - {pattern: "run_command:git status --short", action: ALWAYS}
  - {pattern: "run_command:git log --oneline *", action: ALWAYS}
  - {pattern: "run_command:git diff --stat", action: ALWAYS}
  - {pattern: "run_command:ls *", action: ALWAYS}
  - {pattern: "run_command:cat /workspace/*", action: ALWAYS}
  - {pattern: "run_command:head *", action: ALWAYS}
  - {pattern: "run_command:grep *", action: ALWAYS}
  - {pattern: "run_command:wc *", action: ALWAYS}
  - {pattern: "run_command:echo *", action: ALWAYS}
  - {pattern: "write_file:/workspace/*", action: ALWAYS}
  - {pattern: "write_file:*", action: NEVER}
"""


@dataclass
class Result:
    connections: int
    requests: int
    seconds: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    non2xx: int
    socket_errors: int
    worker_cpu_s: float = 0.0
    database_cpu_s: float | None = None

    @property
    def cpu_ms(self) -> float:
        """gunicorn workers' CPU per request: unlike throughput, unmoved by other load."""
        return 1000 * self.worker_cpu_s / max(1, self.requests)

    @property
    def database_cpu_ms(self) -> float | None:
        """PostgreSQL's CPU per request (every backend, including ones that exited)."""
        if self.database_cpu_s is None:
            return None
        return 1000 * self.database_cpu_s / max(1, self.requests)

    @property
    def rate(self) -> float:
        return self.requests / self.seconds


# --- data: org, policy, bundle, runs (in this process, through the services) -------------


def seed(run_count: int, runs_file: Path) -> None:
    import django

    django.setup()
    from django.db import connection

    from bench.ceiling_app import CEILING_COUNTERS, CEILING_TABLES

    migrate()
    with connection.cursor() as cursor:
        for statement in CEILING_TABLES:
            cursor.execute(statement)
        cursor.execute(CEILING_COUNTERS, [run_count])
    org = bench_org(slug="gate-load", policy=POLICY, bundle=SANDBOX_BUNDLE.read_text())
    created = bench_runs(
        org,
        run_count,
        agent="gate-load",
        autonomy="autonomous",
        budget_tokens=10**12,
        bundles=("sandbox-basic",),
    )
    runs_write(runs_file, created)
    connection.close()


def recorded_decisions(nonce: str) -> dict[str, int]:
    from django.db import connection
    from django.db.models import Count

    from governance.models import ToolCall

    counts = dict(
        ToolCall.objects.filter(tool_call_id__startswith=f"{nonce}-")
        .values_list("decision")
        .annotate(Count("id"))
    )
    connection.close()
    return counts


# --- wrk ---------------------------------------------------------------------------------


def wrk(
    server: "Gunicorn",
    scenario: str,
    *,
    connections: int,
    seconds: float,
    threads: int,
    think_ms: float = 0.0,
    rate: float = 0.0,
) -> tuple[Result, str]:
    nonce = f"{scenario}{secrets.token_hex(4)}"
    env = {
        **os.environ,
        "GATE_LOAD_RUNS": str(server.runs_file),
        "GATE_LOAD_SCENARIO": scenario,
        "GATE_LOAD_NONCE": nonce,
        "GATE_LOAD_THINK_MS": f"{think_ms:.3f}",
        "GATE_LOAD_RATE": f"{rate:.3f}",
    }
    command = [
        "wrk",
        f"-t{min(threads, connections)}",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "-s",
        str(LUA),
        server.url,
    ]
    workers = server.workers()
    cpu_before = cpu_seconds(*workers)
    database_before = server.database_cpu()
    output = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    worker_cpu_s = cpu_seconds(*workers) - cpu_before
    database_cpu_s = None
    database_after = server.database_cpu()
    if database_before is not None and database_after is not None:
        database_cpu_s = database_after - database_before
    line = next(line for line in output.splitlines() if line.startswith("GATE_LOAD_RESULT "))
    raw = json.loads(line.split(" ", 1)[1])
    result = Result(
        connections=connections,
        requests=raw["requests"],
        seconds=raw["duration_us"] / 1e6,
        p50_ms=raw["p50_us"] / 1000,
        p90_ms=raw["p90_us"] / 1000,
        p99_ms=raw["p99_us"] / 1000,
        non2xx=raw["non2xx"],
        socket_errors=raw["socket_errors"],
        worker_cpu_s=worker_cpu_s,
        database_cpu_s=database_cpu_s,
    )
    return result, nonce


def check_recorded(scenario: str, nonce: str, result: Result) -> str:
    if scenario == "ceiling":
        return ""
    counts = recorded_decisions(nonce)
    expected = EXPECTED[scenario]
    wrong = {decision: n for decision, n in counts.items() if decision != expected}
    recorded = counts.get(expected, 0)
    if wrong or recorded < result.requests - result.non2xx:
        raise SystemExit(f"{scenario}: recorded {counts}, expected {result.requests} '{expected}'")
    return f"{recorded} new '{expected}' decisions recorded"


def peaks(server: "Gunicorn", scenarios: list[str], args) -> dict[str, Result]:
    """Each scenario's best throughput over the connection counts. The scenarios take turns
    at each count, so what slows the machine over time (tables growing, autovacuum, other
    load) falls on all of them alike instead of on whichever runs last."""
    for scenario in scenarios:
        wrk(server, scenario, connections=8, seconds=2, threads=args.wrk_threads)  # warm up
    best: dict[str, Result] = {}
    for connections in [n for _ in range(args.rounds) for n in args.conns]:
        for scenario in scenarios:
            result, nonce = wrk(
                server,
                scenario,
                connections=connections,
                seconds=args.seconds,
                threads=args.wrk_threads,
            )
            note = check_recorded(scenario, nonce, result)
            errors = f"  non-2xx {result.non2xx}" if result.non2xx or result.socket_errors else ""
            print(
                f"    {scenario:<8} c={connections:<3} {result.rate:8.1f}/s  "
                f"p50 {result.p50_ms:6.1f} ms  p99 {result.p99_ms:7.1f} ms  "
                f"worker CPU {result.cpu_ms:5.2f} ms/req  "
                f"PostgreSQL CPU {_ms(result.database_cpu_ms)} ms/req{errors}  {note}",
                flush=True,
            )
            if scenario not in best or result.rate > best[scenario].rate:
                best[scenario] = result
    return best


def paced(server: "Gunicorn", scenario: str, target: float, args) -> Result:
    """The scenario at `target` requests/s on --half-conns connections, the arrivals as
    --arrivals says. A closed loop's think time is tuned on short probes, and a measured run
    that lands more than 10% off the target is run again with the think time corrected."""
    connections = args.half_conns
    if args.arrivals == "open":
        threads = min(args.wrk_threads, connections)
        result, nonce = wrk(
            server,
            scenario,
            connections=connections,
            seconds=args.seconds,
            threads=args.wrk_threads,
            rate=target / threads,
        )
        check_recorded(scenario, nonce, result)
        return result
    think_ms = 1000 * connections / target
    probes = 0
    for _ in range(PACING_ATTEMPTS):
        probing = probes < 3
        result, nonce = wrk(
            server,
            scenario,
            connections=connections,
            seconds=3 if probing else args.seconds,
            threads=args.wrk_threads,
            think_ms=think_ms,
        )
        off = abs(result.rate - target) / target
        if probing:
            probes = 3 if off < 0.05 else probes + 1
        elif off < 0.10:
            break
        think_ms = max(0.1, think_ms + 1000 * connections * (1 / target - 1 / result.rate))
    else:
        print(f"    {scenario}: the rate stayed {off:.0%} off its target", flush=True)
    check_recorded(scenario, nonce, result)
    return result


def profile(server: Gunicorn, args) -> None:
    """py-spy on one worker while wrk runs the scenario flat out; prints where time goes."""
    spy = shutil.which("py-spy") or str(BIN / "py-spy")
    worker = server.workers()[0]
    out = Path(tempfile.mkdtemp(prefix="gate-load-spy-")) / "stacks.txt"
    command = [spy, "record", "--pid", str(worker), "--duration", str(round(args.seconds))]
    command += ["--format", "raw", "--output", str(out), "--nonblocking", "--gil"]
    sampler = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    wrk(
        server,
        args.profile,
        connections=16,
        seconds=args.seconds,
        threads=args.wrk_threads,
    )
    sampler.wait()
    print(f"  py-spy, worker {worker}, {args.profile}, samples holding the GIL: {out}")
    for share, frame in hottest_frames(out):
        print(f"    {share:6.1%}  {frame}")


def hottest_frames(stacks: Path, top: int = 30) -> list[tuple[float, str]]:
    """Inclusive share of samples per function (a frame counted once per stack)."""
    inclusive: dict[str, int] = {}
    total = 0
    for line in stacks.read_text().splitlines():
        trace, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        total += int(count)
        for frame in set(trace.split(";")):
            inclusive[frame] = inclusive.get(frame, 0) + int(count)
    ranked = sorted(inclusive.items(), key=lambda item: -item[1])
    return [(n / total, frame) for frame, n in ranked[:top]] if total else []


# --- main --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--conns", default="8,16,32,64", help="connection counts for the peak")
    parser.add_argument("--half-conns", type=int, default=16, help="connections at half load")
    parser.add_argument(
        "--arrivals",
        choices=("closed", "open"),
        default="closed",
        help="at half load: closed (think time per connection, as the README's figures) or "
        "open (Poisson arrivals at the rate, whatever the latency)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="repeat the sweep and the half-load phase, scenarios taking turns each round; "
        "peak: the best of all rounds, half load: the round with the median p99",
    )
    parser.add_argument("--wrk-threads", type=int, default=1)
    parser.add_argument("--workers", type=int, default=int(os.environ.get("WEB_WORKERS", "2")))
    parser.add_argument("--threads", type=int, default=int(os.environ.get("WEB_THREADS", "128")))
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument(
        "--profile",
        choices=[scenario for scenario, _ in SCENARIOS],
        help="also sample one worker with py-spy (pip install py-spy) under flat-out load",
    )
    parser.add_argument(
        "--scenarios",
        default=",".join(scenario for scenario, _ in SCENARIOS),
        help="comma-separated; the ceiling always runs",
    )
    args = parser.parse_args()
    args.conns = [int(n) for n in args.conns.split(",")]
    chosen = {"ceiling", *args.scenarios.split(",")}
    unknown = chosen - {scenario for scenario, _ in SCENARIOS}
    if unknown:
        sys.exit(f"unknown scenarios: {', '.join(sorted(unknown))}")
    scenarios = [(scenario, label) for scenario, label in SCENARIOS if scenario in chosen]
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install -y wrk")

    database_url = throwaway_database(os.environ.get("DATABASE_URL", ""))
    workdir = Path(tempfile.mkdtemp(prefix="gate-load-"))
    env = production_environment(database_url, workdir, FLUIDBOX_BENCH_ENDPOINTS="1")
    os.environ.update(env)
    runs_file = workdir / "runs.txt"
    seed(args.runs, runs_file)

    server = Gunicorn(env, args.workers, args.threads, workdir / "gunicorn.log", runs_file)
    try:
        print(
            f"gunicorn gthread {args.workers} workers x {args.threads} threads, PostgreSQL "
            f"{server_version(database_url)}, DB_POOL_SIZE="
            f"{os.environ.get('DB_POOL_SIZE', '0')}, DB_CONN_MAX_AGE="
            f"{os.environ.get('DB_CONN_MAX_AGE', '0')}, {args.runs} runs, "
            f"wrk {args.wrk_threads} thread(s), {os.cpu_count()} CPUs shared by all",
            flush=True,
        )
        print(f"  load average at start: {load_average()}", flush=True)
        print("  flat out (each request a new decision):", flush=True)
        best = peaks(server, [scenario for scenario, _ in scenarios], args)
        print(f"  paced at half of each peak ({args.arrivals} loop):", flush=True)
        rounds: dict[str, list[Result]] = {scenario: [] for scenario, _ in scenarios}
        for round_ in range(args.rounds):
            for scenario, _ in scenarios:
                target = best[scenario].rate / 2
                half = paced(server, scenario, target, args)
                rounds[scenario].append(half)
                print(
                    f"    {scenario:<8} round {round_ + 1} {half.rate:8.1f}/s (offered "
                    f"{target:.1f}/s)  "
                    f"p50 {half.p50_ms:6.1f} ms  p99 {half.p99_ms:7.1f} ms",
                    flush=True,
                )
        # The round with the median p99 (the higher middle one for an even count).
        halves = {
            scenario: sorted(results, key=lambda r: r.p99_ms)[len(results) // 2]
            for scenario, results in rounds.items()
        }
        print(f"  load average at end: {load_average()}", flush=True)
        if args.profile:
            profile(server, args)
        memory = {"master": memory_kib(server.process.pid)} | {
            f"worker {pid}": memory_kib(pid) for pid in server.workers()
        }
    finally:
        server.stop()
        if not args.keep_db:
            drop_database(database_url)
        shutil.rmtree(workdir, ignore_errors=True)
    report(scenarios, best, halves, memory)


def _ms(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.2f}"


def report(scenarios: list, peaks: dict, halves: dict, memory: dict) -> None:
    ceiling = peaks["ceiling"]
    print()
    print(
        f"{'scenario':<20} {'peak/s':>8} {'conns':>5} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'of ceiling':>10} {'CPU ms':>7} {'CPU share':>9} {'PG ms':>6} | {'half-load/s':>11} "
        f"{'p50 ms':>7} {'p99 ms':>7}"
    )
    verdicts = []
    for scenario, label in scenarios:
        top, half = peaks[scenario], halves[scenario]
        share = top.rate / ceiling.rate
        # What the throughput share would be if the workers' CPU were all that limited it.
        cpu_share = ceiling.cpu_ms / top.cpu_ms if top.cpu_ms else float("nan")
        print(
            f"{label:<20} {top.rate:8.1f} {top.connections:>5} {top.p50_ms:7.1f} "
            f"{top.p99_ms:7.1f} {share:10.0%} {top.cpu_ms:7.2f} {cpu_share:9.0%} "
            f"{_ms(top.database_cpu_ms):>6} | "
            f"{half.rate:11.1f} {half.p50_ms:7.1f} {half.p99_ms:7.1f}"
        )
        if scenario != "ceiling":
            verdicts.append(share >= TARGET_SHARE and half.p99_ms <= TARGET_P99_MS)
    print(
        "(CPU ms: gunicorn workers' CPU per request at the peak; CPU share: ceiling's / this;"
        " PG ms: PostgreSQL's CPU per request: this database's backends with the pool, the"
        " whole server's otherwise)"
    )
    print()
    for name, values in memory.items():
        print(
            f"peak RSS {name:<14} {values['VmHWM'] / 1024:7.1f} MiB "
            f"(now {values['VmRSS'] / 1024:.1f} MiB)"
        )
    print()
    met = "MET" if all(verdicts) else "MISSED"
    print(
        f"target (each gate scenario >= {TARGET_SHARE:.0%} of the ceiling's peak, p99 <= "
        f"{TARGET_P99_MS:.0f} ms at half load): {met}"
    )


if __name__ == "__main__":
    main()
