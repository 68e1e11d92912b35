"""A brokered `tools/call` through fluidbox's MCP endpoint, next to the same call straight to
the upstream and one REST gate decision — side by side, in one run, taking turns.

    DATABASE_URL=postgres://postgres@127.0.0.1:55432/fluidbox .venv/bin/python bench/mcp_call.py

Starts the demo tracker (`python -m demo_mcp`) and gunicorn as production runs it
(fluidbox/gunicorn_conf.py, gthread) on a throwaway database (`<name>_gate_load`, dropped at
the end). Each client keeps one connection/session open, as an agent does; every measured
call is a new decision (a fresh tool-call id). Prints p50/p90/p99 per path and fluidbox's
added p50 (through fluidbox − straight) against one REST gate decision's p50, and the CPU
this process (the clients only: the tracker and gunicorn are other processes) spent per call
of each path — the SDK client's own cost, which the broker pays again inside fluidbox.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    SANDBOX_BUNDLE,
    Gunicorn,
    bench_org,
    bench_runs,
    drop_database,
    free_port,
    load_average,
    migrate,
    percentile,
    production_environment,
    runs_write,
    start_demo_tracker,
    throwaway_database,
)

TOKEN = "bench-tracker-token"
POLICY = """
name: bench
autonomous_fallback: deny
rules:
  - pattern: "read_file:*"
    action: ALWAYS
  - pattern: "tracker.get_issue:*"
    action: ALWAYS
"""


def seed(tracker_url: str, runs_file: Path) -> None:
    import django

    django.setup()
    from django.db import connection

    from governance.authentication import Actor, ActorKind
    from governance.services.connections import connection_create, connection_refresh

    migrate()
    org = bench_org(slug="mcp-bench", policy=POLICY, bundle=SANDBOX_BUNDLE.read_text())
    operator = Actor(kind=ActorKind.OPERATOR, org_id=org.pk, roles={org.pk: "operator"})
    tracker = connection_create(
        org=org,
        actor=operator,
        slug="tracker",
        kind="shared",
        transport="streamable-http",
        url=tracker_url,
        credential={"header": "Authorization", "value": f"Bearer {TOKEN}"},
    )
    connection_refresh(connection=tracker, actor=operator)
    created = bench_runs(
        org,
        1,
        agent="mcp-bench",
        autonomy="autonomous",
        budget_tokens=10**12,
        bundles=("sandbox-basic",),
        connections=("tracker",),
    )
    runs_write(runs_file, created)
    connection.close()


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    return statistics.median(samples), percentile(samples, 0.90), percentile(samples, 0.99)


async def measure(base_url: str, tracker_url: str, run_id: str, token: str, calls: int, era: str):
    timings: dict[str, list[float]] = {"direct": [], "fluidbox": [], "brokered": [], "rest": []}
    client_cpu: dict[str, float] = dict.fromkeys(timings, 0.0)
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as upstream_http,
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as fb_http,
        Client(
            streamable_http_client(tracker_url, http_client=upstream_http), cache=None
        ) as direct,
        Client(
            streamable_http_client(f"{base_url}/v1/mcp", http_client=fb_http), mode=era, cache=None
        ) as through,
    ):
        rest = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"})
        for index in range(calls + 10):  # the first ten warm up and are not counted
            cpu: dict[str, float] = {}
            started, cpu_started = time.perf_counter(), time.process_time()
            result = await direct.call_tool("get_issue", {"issue_id": 1})
            direct_ms = (time.perf_counter() - started) * 1000
            cpu["direct"] = time.process_time() - cpu_started
            assert not result.is_error

            started, cpu_started = time.perf_counter(), time.process_time()
            result = await through.call_tool(
                "tracker__get_issue",
                {"issue_id": 1},
                meta={"fluidbox/toolCallId": f"bench-{uuid.uuid4().hex}"},
            )
            fluidbox_ms = (time.perf_counter() - started) * 1000
            cpu["fluidbox"] = time.process_time() - cpu_started
            assert not result.is_error, result

            call = {"session_id": "bench", "tool_call_id": uuid.uuid4().hex}
            started, cpu_started = time.perf_counter(), time.process_time()
            response = await anyio.to_thread.run_sync(
                lambda call=call: rest.post(
                    f"/v1/runs/{run_id}/tools/tracker.get_issue/call",
                    json={**call, "arguments": {"issue_id": 1}},
                )
            )
            brokered_ms = (time.perf_counter() - started) * 1000
            cpu["brokered"] = time.process_time() - cpu_started
            assert response.json()["result"]["isError"] is False, response.text

            body = {
                "session_id": "bench",
                "tool_call_id": uuid.uuid4().hex,
                "tool": "read_file",
                "arguments": {"path": "/workspace/README.md"},
            }
            started, cpu_started = time.perf_counter(), time.process_time()
            response = await anyio.to_thread.run_sync(
                lambda body=body: rest.post(f"/v1/runs/{run_id}/permission", json=body)
            )
            rest_ms = (time.perf_counter() - started) * 1000
            cpu["rest"] = time.process_time() - cpu_started
            assert response.json()["decision"] == "allow", response.text
            if index >= 10:
                timings["direct"].append(direct_ms)
                timings["fluidbox"].append(fluidbox_ms)
                timings["brokered"].append(brokered_ms)
                timings["rest"].append(rest_ms)
                for key, seconds in cpu.items():
                    client_cpu[key] += seconds * 1000 / calls
        rest.close()
    return timings, client_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--era", default="legacy", help="legacy or 2026-07-28")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=128)
    args = parser.parse_args()

    database_url = throwaway_database(os.environ.get("DATABASE_URL", ""))
    workdir = Path(tempfile.mkdtemp(prefix="mcp-call-"))
    # The demo tracker listens on loopback, which the egress guard refuses by default.
    env = production_environment(
        database_url, workdir, FLUIDBOX_CONNECTION_ALLOWED_HOSTS="127.0.0.1"
    )
    os.environ.update(env)
    tracker_port = free_port()
    tracker_url = f"http://127.0.0.1:{tracker_port}/mcp"
    tracker = start_demo_tracker(tracker_port, env, TOKEN)
    server = None
    try:
        runs_file = workdir / "runs.txt"
        seed(tracker_url, runs_file)
        run_id, token = runs_file.read_text().split()
        server = Gunicorn(env, args.workers, args.threads, workdir / "gunicorn.log", runs_file)
        load_before = load_average()
        timings, client_cpu = anyio.run(
            measure, server.url, tracker_url, run_id, token, args.calls, args.era
        )
        load_after = load_average()
    finally:
        if server is not None:
            server.stop()
        tracker.terminate()
        tracker.wait(10)
        drop_database(database_url)

    print(
        f"{args.calls} calls each, taking turns; gunicorn gthread {args.workers}x{args.threads}, "
        f"MCP era {args.era}; load average {load_before} at the start, {load_after} at the end"
    )
    print(f"{'path':<58} {'p50':>7} {'p90':>7} {'p99':>7} {'client CPU':>11}  (ms)")
    labels = {
        "direct": "tools/call straight to the upstream (one open session)",
        "fluidbox": "tools/call through fluidbox's /v1/mcp (gate + broker)",
        "brokered": "the same brokered call over REST (…/tools/{tool}/call)",
        "rest": "one REST gate decision (POST /v1/runs/{id}/permission)",
    }
    stats = {key: percentiles(values) for key, values in timings.items()}
    for key, label in labels.items():
        p50, p90, p99 = stats[key]
        print(f"{label:<58} {p50:7.1f} {p90:7.1f} {p99:7.1f} {client_cpu[key]:11.2f}")
    added = stats["fluidbox"][0] - stats["direct"][0]
    ratio = added / stats["rest"][0]
    print(f"fluidbox's added p50: {added:.1f} ms = {ratio:.2f} x one REST gate decision's p50")


if __name__ == "__main__":
    main()
