"""What one hook call costs the agent CLI: a fresh interpreter per tool call.

    .venv/bin/python bench/hook_startup.py [--runs 30]

Each shape is a fresh process, as the CLI starts it, given a Bash call on stdin and asking
a local server that answers at once (a 401: the hook denies, and the figure is the hook's
own cost, not a decision's). Side by side: the bare interpreter; the hook as it is; and the
hook with what it loaded before stop 58 (the SDK adapters, the executor and the tool runner
that `import runner` pulled in, and httpx's own command line, rich and click). Prints the
median wall time and the median CPU (user + system) of each.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVENT = json.dumps(
    {
        "session_id": "s-1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status"},
        "tool_use_id": "toolu_1",
    }
)
BEFORE = (
    "import runner.adapters, runner.executor, runner.tools, httpx._main, runpy, sys; "
    "sys.argv[0] = 'runner.hook'; runpy.run_module('runner.hook', run_name='__main__')"
)


class Refusing(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"detail": "bench"}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def measure(command: list[str]) -> tuple[float, float]:
    env = {**os.environ, "FLUIDBOX_RUN_TOKEN": "fbr_bench"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=ROOT, env=env, input=EVENT, capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if command[1] != "-c" or "runpy" in command[2]:
        assert "deny" in done.stdout, done.stdout + done.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hook_args = ["claude-code", "--url", f"http://127.0.0.1:{server.server_port}", "--run", "r1"]
    shapes = {
        "bare interpreter": [sys.executable, "-c", "pass"],
        "hook call": [sys.executable, "-m", "runner.hook", *hook_args],
        "hook call, with what it loaded before": [sys.executable, "-c", BEFORE, *hook_args],
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in shapes}
    for _ in range(runs):  # interleaved, so a busy moment weighs on every shape alike
        for name, command in shapes.items():
            samples[name].append(measure(command))
    server.shutdown()
    print(f"{runs} runs each, medians")
    for name, pairs in samples.items():
        wall = statistics.median(w for w, _ in pairs) * 1000
        cpu = statistics.median(c for _, c in pairs) * 1000
        print(f"  {name:40} wall {wall:6.0f} ms   cpu {cpu:6.0f} ms")


if __name__ == "__main__":
    main()
