"""Where one gate decision's CPU and round trips go, in one process, without a load generator.

Seeds a throwaway PostgreSQL database exactly as bench/gate_load.py does (production
settings, the same policy, bundle and runs), then calls the WSGI application directly with
the same request bodies as bench/gate_load.lua: every call a new decision. For each scenario
(and the ceiling endpoint) it prints the CPU time per request (`time.process_time`, one
thread, so no other process's load counts), the SQL statements per request (counted with
`connection.execute_wrapper`) and, with `--profile`, cProfile's hottest functions.

With `--trace`, tracing is on as bench/observability_load.py has it: every span exported
over OTLP/HTTP to a receiver in a separate process (so its CPU does not count), and the CPU
per request includes the batch exporter's thread (`time.process_time` counts every thread).
`--profile` then profiles every thread with yappi when it is installed (profiling only, not a
requirement), else cProfile on the calling thread.

    DATABASE_URL=postgres://postgres@127.0.0.1:55432/fluidbox DB_POOL_SIZE=16 \\
        .venv/bin/python bench/gate_profile.py [--calls 2000] [--profile always] [--top 40] \\
        [--trace]
"""

import argparse
import cProfile
import gc
import io
import os
import pstats
import secrets
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.gate_load import seed  # noqa: E402
from bench.harness import (  # noqa: E402
    OtlpReceiverProcess,
    backends_cpu_seconds,
    drop_database,
    load_average,
    production_environment,
    runs_read,
    throwaway_database,
    wsgi_post,
)

SEGMENTS = (
    "git status", "ls -la /workspace/src", "grep -n TODO /workspace/src/app.py", "wc -l",
    "cat /workspace/README.md", "head -n 5", "echo step-{n}", "git log --oneline -n 3",
    "ls /workspace/tests", "grep -c def", "cat /workspace/setup.cfg", "wc -c",
    "echo checked-{n}", "git diff --stat", "head -n 20 /workspace/CHANGES.md", "grep -v '^#'",
    "ls -1 /workspace/docs", "wc -w", "echo done-{n}", "git status --short",
)  # fmt: skip
SEPARATORS = (" && ", " | ", "; ", " | ")


def shell_line(n: int) -> str:
    parts = []
    for index, segment in enumerate(SEGMENTS):
        parts.append(segment.format(n=n))
        if index < len(SEGMENTS) - 1:
            parts.append(SEPARATORS[index % len(SEPARATORS)])
    return "".join(parts)


def request(scenario: str, n: int, runs: list[tuple[str, str]], nonce: str):
    """(path, headers, body) of request n, as bench/gate_load.lua builds it."""
    slot = n % len(runs)
    if scenario == "ceiling":
        payload = {"tool": "read_file", "path": f"/workspace/src/module_{n}.py", "id": f"{n}"}
        return "/bench/ceiling", {}, {"counter": slot + 1, "payload": payload}
    if scenario == "always":
        tool, arguments = "read_file", {"path": f"/workspace/src/module_{n}.py"}
    elif scenario == "never":
        tool, arguments = "run_command", {"command": f"rm -rf /workspace/build-{n}"}
    else:
        tool, arguments = "run_command", {"command": shell_line(n)}
    run_id, token = runs[slot]
    body = {
        "session_id": "load",
        "tool_call_id": f"{nonce}-{n}",
        "tool": tool,
        "arguments": arguments,
    }
    return f"/v1/runs/{run_id}/permission", {"HTTP_AUTHORIZATION": f"Bearer {token}"}, body


def call(application, path: str, headers: dict, body: dict) -> int:
    environ = wsgi_post(path, body, headers)
    status = []
    result = application(environ, lambda code, _headers, exc_info=None: status.append(code))
    b"".join(result)
    if hasattr(result, "close"):
        result.close()
    return int(status[0].split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--calls", type=int, default=2000, help="per scenario and round")
    parser.add_argument("--rounds", type=int, default=3, help="the scenarios take turns")
    parser.add_argument("--scenarios", default="ceiling,always,never,shell20")
    parser.add_argument("--profile", help="cProfile this scenario (one extra round)")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--sort", default="cumulative", help="pstats sort key")
    parser.add_argument("--dump", help="also write the raw cProfile stats here (pstats)")
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument("--trace", action="store_true", help="export every span over OTLP")
    args = parser.parse_args()
    scenarios = args.scenarios.split(",")

    database_url = throwaway_database(os.environ.get("DATABASE_URL", ""))
    workdir = Path(tempfile.mkdtemp(prefix="gate-profile-"))
    # This process serves the calls: the production settings, as gunicorn has them.
    env = production_environment(database_url, workdir, FLUIDBOX_BENCH_ENDPOINTS="1")
    receiver = None
    if args.trace:
        receiver = OtlpReceiverProcess()
        env.update(
            OTEL_TRACES_EXPORTER="otlp",
            OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=receiver.endpoint,
            OTEL_SERVICE_NAME="fluidbox-bench",
            OTEL_BSP_MAX_QUEUE_SIZE="200000",
        )
    else:
        for key in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"):
            env.pop(key, None)
        env.pop("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", None)
    os.environ.clear()
    os.environ.update(env)
    try:
        runs_file = workdir / "runs.txt"
        seed(args.runs, runs_file)
        runs = runs_read(runs_file)
        measure(runs, scenarios, args)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep_db:
            drop_database(database_url)
        if receiver is not None:
            from governance.observability import tracing

            tracing.flush(30000)  # before the receiver goes: the exporter would retry
            print(f"spans received: {receiver.stop()}")


def measure(runs, scenarios, args) -> None:
    from django.db import connection

    from fluidbox.wsgi import application

    statements = [0]

    def count(execute, sql, params, many, context):
        statements[0] += 1
        return execute(sql, params, many, context)

    print(
        f"pool={os.environ.get('DB_POOL_SIZE', '0')} {args.runs} runs, {args.calls} calls per "
        f"scenario and round, load average {load_average()}"
    )
    for scenario in scenarios:  # warm up: imports, caches, first connections
        for n in range(50):
            call(application, *request(scenario, n, runs, f"warm{scenario}"))
    gc.freeze()  # as fluidbox/gunicorn_conf.py does in each worker once it has loaded
    collector = GcClock()
    gc.callbacks.append(collector)
    totals = {scenario: [0.0, 0.0, 0, 0, 0.0] for scenario in scenarios}
    database_url = os.environ["DATABASE_URL"]
    for round_ in range(args.rounds):
        for scenario in scenarios:
            nonce = f"r{round_}{scenario}{secrets.token_hex(3)}"
            prepared = [request(scenario, n, runs, nonce) for n in range(args.calls)]
            statements[0] = 0
            collector.reset()
            database_before = backends_cpu_seconds(database_url)
            with connection.execute_wrapper(count):
                wall, cpu = time.perf_counter(), time.process_time()
                for path, headers, body in prepared:
                    status = call(application, path, headers, body)
                    if status != 200:
                        sys.exit(f"{scenario}: HTTP {status}")
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            database_after = backends_cpu_seconds(database_url)
            database = None
            if database_before is not None and database_after is not None:
                database = database_after - database_before
            total = totals[scenario]
            total[0] += cpu
            total[1] += wall
            total[2] += statements[0]
            total[3] += args.calls
            total[4] += database or 0.0
            pg = "  n/a" if database is None else f"{1000 * database / args.calls:5.2f}"
            print(
                f"  round {round_} {scenario:<8} CPU {1000 * cpu / args.calls:5.2f} ms/req  "
                f"PostgreSQL CPU {pg} ms/req  wall {1000 * wall / args.calls:5.2f} ms/req  "
                f"SQL {statements[0] / args.calls:4.1f}/req  {collector.summary(args.calls)}",
                flush=True,
            )
    print()
    ceiling = totals.get("ceiling")
    ceiling_cpu = ceiling[0] / ceiling[3] if ceiling else 0.0
    for scenario, (cpu, wall, sql, n, database) in totals.items():
        share = f"  ceiling/this CPU {ceiling_cpu / (cpu / n):4.0%}" if ceiling_cpu else ""
        print(
            f"{scenario:<8} CPU {1000 * cpu / n:5.2f} ms/req  PostgreSQL CPU "
            f"{1000 * database / n:5.2f} ms/req  wall {1000 * wall / n:5.2f} ms/req"
            f"  SQL {sql / n:4.1f}/req{share}"
        )
    print(f"load average at end: {load_average()}")
    if args.profile:
        prepared = [
            request(args.profile, n, runs, f"prof{secrets.token_hex(3)}") for n in range(args.calls)
        ]
        try:
            import yappi
        except ImportError:
            yappi = None
        if yappi is not None:
            profile_threads(yappi, application, prepared, args)
            return
        profiler = cProfile.Profile(time.process_time)  # CPU, not waits
        profiler.enable()
        for path, headers, body in prepared:
            call(application, path, headers, body)
        profiler.disable()
        if args.dump:
            profiler.dump_stats(args.dump)
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats(args.sort).print_stats(args.top)
        print(out.getvalue())


class GcClock:
    """Garbage collections and the wall time they took (every thread waits), by generation."""

    def __init__(self) -> None:
        self.reset()
        self._started = None

    def reset(self) -> None:
        self.counts = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            generation = info["generation"]
            self.counts[generation] += 1
            self.seconds[generation] += time.perf_counter() - self._started
            self._started = None

    def summary(self, calls: int) -> str:
        return (
            f"GC {1000 * sum(self.seconds) / calls:4.2f} ms/req (collections by generation "
            f"{'/'.join(map(str, self.counts))})"
        )


def profile_threads(yappi, application, prepared, args) -> None:
    """CPU per function on every thread (the batch span exporter's too), per thread."""
    from opentelemetry.sdk.trace import TracerProvider

    yappi.set_clock_type("cpu")
    yappi.start()
    for path, headers, body in prepared:
        call(application, path, headers, body)
    from governance.observability import tracing

    if tracing.ENABLED and isinstance(tracing._provider, TracerProvider):
        tracing.flush(30000)
    yappi.stop()
    for thread in yappi.get_thread_stats():
        print(
            f"thread {thread.name} (id {thread.id}): {1000 * thread.ttot / len(prepared):.3f} "
            "ms CPU per request"
        )
        stats = yappi.get_func_stats(ctx_id=thread.id)
        stats.sort("ttot" if args.sort == "cumulative" else "tsub")
        out = io.StringIO()
        stats.print_all(
            out=out,
            columns={0: ("name", 90), 1: ("ncall", 10), 2: ("tsub", 8), 3: ("ttot", 8)},
        )
        print("\n".join(out.getvalue().splitlines()[: args.top + 4]))
    if args.dump:
        yappi.get_func_stats().save(args.dump, type="pstat")


if __name__ == "__main__":
    main()
