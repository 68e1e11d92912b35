"""Review 56 of the runner's promises, from the sandbox's side.

A hostile gate here is a raw socket on 127.0.0.1 (ports 43600-43699) that answers every request
with canned bytes; the live tests use the project's gunicorn fixture.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest

from runner import GatedToolbox, GateError, GatePermission, ToolRunner, Workspace
from tests.runner_live.conftest import create_run

TOKEN = "run-token-that-must-stay-secret"


class CannedGate:
    """Reads one HTTP request per connection and answers it with `answer` bytes, then closes."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.requests = 0
        self._socket = socket.socket()
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        for port in range(43640, 43700):
            try:
                self._socket.bind(("127.0.0.1", port))
                break
            except OSError:
                continue
        else:
            raise RuntimeError("no free port in 43640-43699")
        self.port = port
        self._socket.listen(16)
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            with connection:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                while len(body) < length:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    body += chunk
                self.requests += 1
                connection.sendall(self.answer)

    def close(self) -> None:
        self._socket.close()


def _answer(body: bytes, *headers: bytes) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + b"".join(header + b"\r\n" for header in headers)
        + b"Content-Length: "
        + str(len(body)).encode()
        + b"\r\nConnection: close\r\n\r\n"
        + body
    )


@pytest.fixture
def garbled_gate() -> Iterator[CannedGate]:
    # A 200 whose body says it is gzip but is not: httpx raises `httpx.DecodingError`, which is
    # neither a `TransportError` (the client's retry path) nor a `GateError`.
    gate = CannedGate(_answer(b'{"decision": "allow"}', b"Content-Encoding: gzip"))
    yield gate
    gate.close()


def _client(url: str):
    from runner import GateClient

    return GateClient(url, "run-1", TOKEN, retries=2, backoff=0.01, max_backoff=0.02, timeout=5)


def test_a_gate_answer_that_cannot_be_decoded_is_a_gate_error(garbled_gate) -> None:
    # Proves: an undecodable body escaped `GateClient.ask` as a raw `httpx.DecodingError`
    # instead of the `GateError` every caller (ToolRunner, GatePermission, the demo) catches.
    with _client(garbled_gate.url) as client, pytest.raises(GateError) as raised:
        client.ask("s", "c-1", "run_command", {"command": "ls"}, wait_seconds=0)
    assert TOKEN not in str(raised.value) and TOKEN not in repr(raised.value)


def test_the_toolbox_tells_the_model_a_garbled_gate_answer_and_runs_nothing(
    garbled_gate, workspace: Workspace
) -> None:
    # Proves: the toolbox fails closed *with a reason* — before, the DecodingError crashed the
    # agent loop out of `GatedToolbox.call` instead of coming back as a tool error.
    toolbox = GatedToolbox(ToolRunner(_client(garbled_gate.url), workspace))
    result = toolbox.call("write_file", {"path": "x.md", "content": "x"}, tool_call_id="c-1")
    assert result.is_error and "was not run" in result.text
    assert not (workspace.root / "x.md").exists()


def test_the_sdk_permission_denies_on_a_garbled_gate_answer(garbled_gate) -> None:
    # Proves: the claude-agent-sdk PreToolUse hook and can_use_tool answer `deny` with a reason.
    # Before, the exception escaped the hook callback; what the SDK/CLI then does with a
    # failed hook (a non-blocking hook error lets the tool proceed) is not the gate's verdict.
    permission = GatePermission(_client(garbled_gate.url), session_id="s", total_wait=0)
    hook = asyncio.run(
        permission.pre_tool_use(
            {"tool_name": "Write", "tool_input": {"file_path": "/tmp/x", "content": "x"}},
            "tu-1",
            None,
        )
    )
    callback = asyncio.run(
        permission.can_use_tool("Bash", {"command": "ls"}, {"tool_use_id": "tu-2"})
    )
    assert hook["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "could not decide" in hook["hookSpecificOutput"]["permissionDecisionReason"]
    assert callback["behavior"] == "deny"


def test_an_allow_naming_another_tool_call_fails_closed(workspace: Workspace) -> None:
    # Proves: an answer that names a different (session_id, tool_call_id) than the one asked
    # is not taken as this call's allow (a misrouted or replayed answer). The gate's answers
    # do not echo the ids today, so this holds only when one is present (hardening).
    gate = CannedGate(_answer(b'{"decision": "allow", "tool_call_id": "someone-else"}'))
    try:
        toolbox = GatedToolbox(ToolRunner(_client(gate.url), workspace), session_id="s")
        result = toolbox.call("write_file", {"path": "y.md", "content": "y"}, tool_call_id="c-1")
    finally:
        gate.close()
    assert result.is_error and "was not run" in result.text
    assert not (workspace.root / "y.md").exists()


@pytest.mark.slow
def test_a_retried_tool_call_id_never_runs_the_local_tool_twice(
    fluidbox_server,
    operator,
    tmp_path,
) -> None:
    # Proves: one tool_call_id is at most one execution on the sandbox side, as it is for a
    # brokered call (the broker answers a retry `replayed` without calling again). The live
    # gate answers the repeated id with its settled `allow`; the ToolRunner ran the write
    # again, so a late retry of call t1 overwrote what the later call t2 wrote.
    from runner import GateClient

    run_id, token = create_run(operator)
    root = tmp_path / "ws"
    root.mkdir()
    with GateClient(fluidbox_server.url, run_id, token) as client:
        toolbox = GatedToolbox(ToolRunner(client, Workspace(root), total_wait=0), session_id="s")
        first = toolbox.call("write_file", {"path": "a.md", "content": "v1"}, tool_call_id="t1")
        second = toolbox.call("write_file", {"path": "a.md", "content": "v2"}, tool_call_id="t2")
        retried = toolbox.call("write_file", {"path": "a.md", "content": "v1"}, tool_call_id="t1")
    assert not first.is_error and not second.is_error, (first.text, second.text)
    assert (root / "a.md").read_text() == "v2", "the retry of t1 ran a second time"
    assert retried.is_error and "already ran" in retried.text
