"""--max-wait bounds the hook's whole decision: a gate that stalls cannot keep the CLI waiting
past its hook timeout (where a CLI may run the call anyway)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.agents.test_hook import bash, claude_decision, hook

MAX_WAIT = 2
# The machine is shared and busy: a generous margin, still far below what the hook took
# before it had one deadline (each of three attempts could wait 10 s + the long-poll).
MARGIN = 10


class StallingGate(ThreadingHTTPServer):
    """A fake gate on 127.0.0.1 that answers the first `pending_answers` requests with
    "pending" at once, then holds every later one open without a word."""

    daemon_threads = True

    def __init__(self, pending_answers: int) -> None:
        super().__init__(("127.0.0.1", 0), _Stall)
        self.pending_answers = pending_answers
        self.requests = 0
        self.released = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Stall(BaseHTTPRequestHandler):
    server: StallingGate

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.requests += 1
        if self.server.requests > self.server.pending_answers:
            self.server.released.wait(60)
            return
        body = json.dumps({"decision": "pending", "approval": {"id": "a1"}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(params=[0, 1], ids=["stalls-at-once", "pending-then-stalls"])
def stalling_gate(request):
    gate = StallingGate(pending_answers=request.param)
    serving = threading.Thread(target=gate.serve_forever, daemon=True)
    serving.start()
    yield gate
    gate.released.set()
    gate.shutdown()
    gate.server_close()


def test_a_stalling_gate_gets_a_deny_within_max_wait(stalling_gate):
    started = time.monotonic()

    answer = hook(
        "claude-code",
        bash("ls", "toolu_stall"),
        url=stalling_gate.url,
        run_id="r",
        token="fbr_x",
        options=("--max-wait", str(MAX_WAIT)),
    )

    decision, reason = claude_decision(answer)
    assert decision == "deny"
    assert "in time" in reason or "awaits a human's approval" in reason
    assert time.monotonic() - started < MAX_WAIT + MARGIN
    assert stalling_gate.requests >= 1
