"""Where a brokered call's time, CPU and statements go, in one process, without gunicorn.

    DATABASE_URL=postgres://postgres@127.0.0.1:55432/fluidbox .venv/bin/python \\
        bench/broker_profile.py [--calls 300] [--rounds 3] [--show-sql] \\
        [--profile mcp --sort tottime --top 40 --dump /tmp/mcp.pstats]

Starts the demo tracker and seeds a throwaway database as bench/mcp_call.py does, then calls
the WSGI application in this process, the kinds taking turns each round: `rest` (one REST
gate decision, `…/permission`), `brokered` (`…/tools/tracker.get_issue/call`) and `mcp`
(`tools/call` through `/v1/mcp`, 2026-07-28 single-exchange requests) and `mcp-legacy` (the
same with the initialize-handshake era's headers, stateless). Every call is a new
decision. Per kind: wall time p50, the process's CPU per call (`time.process_time`: the
request thread, the MCP loop, its database threads and the upstream session pool's loop;
the tracker is another process) and the SQL statements per call on every thread
(`--show-sql` prints one call's statements). `--profile KIND` adds one round of that kind
under cProfile (wall-clock timer; for `mcp`, only the service on the MCP loop's database
thread, where its work runs).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    drop_database,
    free_port,
    load_average,
    production_environment,
    start_demo_tracker,
    throwaway_database,
    wsgi_post,
)
from bench.mcp_call import TOKEN, seed  # noqa: E402

KINDS = ("rest", "brokered", "mcp", "mcp-legacy")


class Statements:
    """Every statement any thread sends through Django, counted (and kept when asked)."""

    def __init__(self) -> None:
        self.count = 0
        self.kept: list[str] | None = None
        self._lock = threading.Lock()

    def install(self) -> None:
        from django.db.backends import utils

        original = utils.CursorWrapper._execute_with_wrappers
        counter = self

        def counted(self, sql, params, many, executor):
            with counter._lock:
                counter.count += 1
                if counter.kept is not None:
                    counter.kept.append(" ".join(str(sql).split())[:220])
            return original(self, sql, params, many, executor)

        utils.CursorWrapper._execute_with_wrappers = counted


def environ_for(path: str, token: str, body: dict, extra: dict | None = None) -> dict:
    return wsgi_post(path, body, {"HTTP_AUTHORIZATION": f"Bearer {token}", **(extra or {})})


def request(kind: str, run_id: str, token: str) -> dict:
    call_id = uuid.uuid4().hex
    if kind == "rest":
        body = {
            "session_id": "bench",
            "tool_call_id": call_id,
            "tool": "read_file",
            "arguments": {"path": "/workspace/README.md"},
        }
        return environ_for(f"/v1/runs/{run_id}/permission", token, body)
    if kind == "brokered":
        body = {"session_id": "bench", "tool_call_id": call_id, "arguments": {"issue_id": 1}}
        return environ_for(f"/v1/runs/{run_id}/tools/tracker.get_issue/call", token, body)
    if kind == "mcp-legacy":  # the initialize-handshake era, stateless: no handshake needed
        body = _mcp_call_body(call_id, {})
        headers = {
            "HTTP_ACCEPT": "application/json, text/event-stream",
            "HTTP_MCP_PROTOCOL_VERSION": "2025-06-18",
        }
        return environ_for("/v1/mcp", token, body, headers)
    era = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {
        "HTTP_ACCEPT": "application/json, text/event-stream",
        "HTTP_MCP_PROTOCOL_VERSION": "2026-07-28",
        "HTTP_MCP_METHOD": "tools/call",
        "HTTP_MCP_NAME": "tracker__get_issue",
    }
    return environ_for("/v1/mcp", token, _mcp_call_body(call_id, era), headers)


def _mcp_call_body(call_id: str, meta: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "tracker__get_issue",
            "arguments": {"issue_id": 1},
            "_meta": {"fluidbox/toolCallId": f"bench-{call_id}", **meta},
        },
    }


def call(application, environ: dict, kind: str) -> None:
    status = []
    result = application(environ, lambda code, _headers, exc_info=None: status.append(code))
    body = b"".join(result)
    if hasattr(result, "close"):
        result.close()
    if not status[0].startswith("200"):
        sys.exit(f"{kind}: {status[0]} {body[:500]!r}")
    if kind == "brokered" and json.loads(body)["result"]["isError"]:
        sys.exit(f"brokered: {body[:500]!r}")
    if kind.startswith("mcp") and (b'"isError":true' in body or b'"error"' in body):
        sys.exit(f"mcp: {body[:800]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="per kind and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--show-sql", action="store_true")
    parser.add_argument("--profile", choices=KINDS)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--dump")
    args = parser.parse_args()
    kinds = args.kinds.split(",")

    database_url = throwaway_database(os.environ.get("DATABASE_URL", ""))
    workdir = Path(tempfile.mkdtemp(prefix="broker-profile-"))
    # The demo tracker listens on loopback, which the egress guard refuses by default.
    os.environ.update(
        production_environment(database_url, workdir, FLUIDBOX_CONNECTION_ALLOWED_HOSTS="127.0.0.1")
    )
    for name in ("FLUIDBOX_DEVELOPMENT", "DEBUG"):
        os.environ.pop(name, None)
    tracker_port = free_port()
    tracker = start_demo_tracker(tracker_port, dict(os.environ), TOKEN)
    try:
        runs_file = workdir / "runs.txt"
        seed(f"http://127.0.0.1:{tracker_port}/mcp", runs_file)
        run_id, token = runs_file.read_text().split()
        measure(run_id, token, kinds, args)
    finally:
        from django.db import connections

        from governance.mcp_sessions import pool

        pool.close_all()
        connections.close_all()
        tracker.terminate()
        tracker.wait(10)
        drop_database(database_url)


def measure(run_id: str, token: str, kinds: list[str], args) -> None:
    from fluidbox.wsgi import application

    statements = Statements()
    statements.install()
    print(
        f"{args.calls} calls per kind and round, {args.rounds} rounds; "
        f"load average {load_average()}"
    )
    for kind in kinds:  # warm up: imports, caches, connections, the upstream session
        for _ in range(20):
            call(application, request(kind, run_id, token), kind)
    if args.show_sql:
        for kind in kinds:
            statements.kept = []
            call(application, request(kind, run_id, token), kind)
            print(f"\n{kind}: {len(statements.kept)} statements")
            for sql in statements.kept:
                print(f"  {sql}")
            statements.kept = None
        print()
    walls: dict[str, list[float]] = {kind: [] for kind in kinds}
    totals = {kind: [0.0, 0] for kind in kinds}
    for _round in range(args.rounds):
        for kind in kinds:
            prepared = [request(kind, run_id, token) for _ in range(args.calls)]
            statements.count = 0
            cpu = time.process_time()
            for environ in prepared:
                started = time.perf_counter()
                call(application, environ, kind)
                walls[kind].append((time.perf_counter() - started) * 1000)
            totals[kind][0] += time.process_time() - cpu
            totals[kind][1] += statements.count
    print(f"{'kind':<10} {'wall p50':>9} {'CPU/call':>9} {'SQL/call':>9}  (ms)")
    for kind in kinds:
        n = args.calls * args.rounds
        print(
            f"{kind:<10} {statistics.median(walls[kind]):9.2f} "
            f"{1000 * totals[kind][0] / n:9.2f} {totals[kind][1] / n:9.1f}"
        )
    print(f"load average {load_average()}")
    if args.profile:
        profile(application, run_id, token, args)


def profile(application, run_id: str, token: str, args) -> None:
    kind = args.profile
    profiler = cProfile.Profile()
    prepared = [request(kind, run_id, token) for _ in range(args.calls)]
    if kind.startswith("mcp"):
        # The call's work runs on a database thread of the MCP loop, not this one: profile
        # the service there (the calls come one at a time, so one profiler is enough).
        from governance.mcp_server import server

        served = server.mcp_tool_call

        def profiled(**kwargs):
            profiler.enable()
            try:
                return served(**kwargs)
            finally:
                profiler.disable()

        server.mcp_tool_call = profiled
        for environ in prepared:
            call(application, environ, kind)
        server.mcp_tool_call = served
    else:
        profiler.enable()
        for environ in prepared:
            call(application, environ, kind)
        profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats(args.sort).print_stats(args.top)
    print(out.getvalue())
    if args.dump:
        profiler.dump_stats(args.dump)


if __name__ == "__main__":
    main()
