"""Fixtures for the runner's tests that need no fluidbox server.

`FakeGate` stands in for the server's runner endpoints (SPEC §8) — real HTTP on a real socket,
with state that survives a restart the way the database would — so the client's retries,
re-attachment and long-polling are exercised over the network, not against mocks.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from runner import GateClient, Workspace, setup_hazards
from tests.support.ports import free_port
from tests.support.waiting import PATIENCE_SECONDS

SENTINEL = "outside-the-workspace: must never be read or changed"


class FakeGate:
    """The runner endpoints of a fluidbox run, with scripted verdicts and a request log."""

    def __init__(self, run_id: str = "run-1", token: str = "run-token") -> None:
        self.run_id = run_id
        self.token = token
        self.condition = threading.Condition()
        self.default_verdict = "allow"
        self.verdicts: dict[str, str] = {}  # tool -> allow | deny | ask
        self.rule_actions: dict[str, str] = {}  # tool -> the matching rule's action
        self.approvals: dict[tuple[str, str], dict[str, Any]] = {}
        self.settled: dict[tuple[str, str], dict[str, Any]] = {}
        self.requests: list[dict[str, Any]] = []
        self.secrets: dict[str, dict[str, str]] = {}
        self.read_only = False
        self.allowance = 20_000
        self.reservations: dict[str, dict[str, Any]] = {}
        self.settlements: list[dict[str, Any]] = []
        self.brokered_results: dict[str, dict[str, Any]] = {}
        self.brokered_runs: dict[tuple[str, str], int] = {}
        self.injected: deque[int | str] = deque()  # statuses to answer next, or "drop"
        self.redirect_to: str | None = None
        self.finished = False
        self.stopping = False
        self.port = free_port()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.stopping = False
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()

    def stop(self) -> None:
        """Like a server process dying: waiting requests lose their connection, nobody answers."""
        with self.condition:
            self.stopping = True
            self.condition.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def decide(self, session_id: str, tool_call_id: str, outcome: str) -> None:
        with self.condition:
            self.approvals[(session_id, tool_call_id)]["status"] = outcome
            self.condition.notify_all()

    def wait_for_approval(self, timeout: float = PATIENCE_SECONDS) -> dict[str, Any]:
        with self.condition:
            if not self.condition.wait_for(lambda: self.approvals, timeout=timeout):
                raise AssertionError("no approval was requested")
            return next(iter(self.approvals.values()))

    def requests_to(self, suffix: str) -> list[dict[str, Any]]:
        return [request for request in self.requests if request["path"].endswith(suffix)]

    def client(self, **options: Any) -> GateClient:
        options = {
            "retries": 3,
            "backoff": 0.02,
            "max_backoff": 0.1,
            "poll_interval": 0.05,
            **options,
        }
        return GateClient(self.url, self.run_id, self.token, **options)

    # Endpoint behaviour, called by the request handler with the condition held.

    def answer(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> Any:
        run = f"/v1/runs/{self.run_id}"
        if method == "GET" and path == f"{run}/secrets":
            if self.read_only:
                return 403, {"detail": "a read-only run gets no secrets"}
            return 200, {"env": self.secrets.get(query.get("tool", [""])[0], {})}
        if path == f"{run}/permission":
            return self._permission(body, body.get("tool"))
        if path.startswith(f"{run}/tools/") and path.endswith("/call"):
            return self._brokered(body, path[len(f"{run}/tools/") : -len("/call")])
        if path == f"{run}/budget/reservations":
            return self._reserve(body)
        if path.startswith(f"{run}/budget/reservations/") and path.endswith("/settle"):
            self.settlements.append({"path": path, **body})
            return 200, {"settled": True}
        if path == f"{run}/finish":
            self.finished = True
            return 200, {"status": "finished"}
        return 404, {"detail": "not found"}

    def _permission(self, body: dict[str, Any], tool: str) -> Any:
        key = (body["session_id"], body["tool_call_id"])
        if key in self.settled:
            return 200, self.settled[key]
        verdict = self.verdicts.get(tool, self.default_verdict)
        rule = {"pattern": f"{tool}:*", "action": self.rule_actions.get(tool, "ALWAYS")}
        if verdict != "ask":
            return 200, self._settle(key, verdict, "policy", rule)
        approval = self.approvals.setdefault(
            key, {"id": f"ap-{len(self.approvals) + 1}", "status": "pending"}
        )
        self.condition.notify_all()
        self.condition.wait_for(
            lambda: approval["status"] != "pending" or self.stopping,
            timeout=body.get("wait_seconds", 0),
        )
        if self.stopping:
            return "drop"
        if approval["status"] == "pending":
            return 200, _decision("pending", "approval", "awaiting approval", rule, approval)
        verdict = "allow" if approval["status"] == "approved" else "deny"
        return 200, self._settle(key, verdict, "approval", {**rule, "action": "ASK"}, approval)

    def _settle(self, key: Any, verdict: str, source: str, rule: Any, approval: Any = None) -> Any:
        decision = _decision(verdict, source, f"{source} says {verdict}", rule, approval)
        if verdict == "deny":
            decision["tool_error"] = f"Denied by policy rule {rule['pattern']}; not run."
        self.settled[key] = decision
        return decision

    def _brokered(self, body: dict[str, Any], tool: str) -> Any:
        status, decision = self._permission(body, tool)
        if decision["decision"] != "allow":
            return status, decision
        key = (body["session_id"], body["tool_call_id"])
        if key in self.brokered_runs:
            return 200, {**decision, "replayed": True, "result": None}
        self.brokered_runs[key] = 1
        return 200, {**decision, "result": self.brokered_results.get(tool)}

    def _reserve(self, body: dict[str, Any]) -> Any:
        key = body["request_key"]
        if key in self.reservations:
            return 200, self.reservations[key]
        booked = sum(r["reserved_tokens"] for r in self.reservations.values())
        wanted = body["max_output_tokens"] + body["input_tokens_upper_bound"]
        if booked + wanted > self.allowance:
            return 409, {"error": "budget_exhausted", "remaining_tokens": self.allowance - booked}
        reservation = {
            "id": f"res-{len(self.reservations) + 1}",
            "reserved_tokens": wanted,
            "remaining_tokens": self.allowance - booked - wanted,
        }
        self.reservations[key] = reservation
        return 201, reservation


def _decision(verdict: str, source: str, reason: str, rule: Any, approval: Any) -> dict[str, Any]:
    return {
        "decision": verdict,
        "source": None if verdict == "allow" and source == "policy" else source,
        "reason": reason,
        "rule": rule,
        "approval": dict(approval) if approval else None,
        "tool_error": None,
    }


def _handler_for(gate: FakeGate) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with gate.condition:
                gate.requests.append(
                    {
                        "method": method,
                        "path": url.path,
                        "body": body,
                        "authorization": self.headers.get("Authorization"),
                    }
                )
                if self.headers.get("Authorization") != f"Bearer {gate.token}" or gate.finished:
                    return self._send(401, {"detail": "invalid or expired run session token"})
                if gate.redirect_to:
                    return self._send(307, {}, {"Location": gate.redirect_to + url.path})
                if gate.injected:
                    injected = gate.injected.popleft()
                    if injected == "drop":
                        return None
                    return self._send(int(injected), {"detail": "injected failure"})
                answer = gate.answer(method, url.path, parse_qs(url.query), body)
            if answer == "drop":
                return None
            return self._send(*answer)

        def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@pytest.fixture
def fake_gate() -> Iterator[FakeGate]:
    gate = FakeGate()
    gate.start()
    yield gate
    gate.stop()


@pytest.fixture
def another_server() -> Iterator[FakeGate]:
    """A second origin, to see whether anything is ever sent to it."""
    gate = FakeGate()
    gate.start()
    yield gate
    gate.stop()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace holding a sentinel file no tool may touch."""
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "sentinel.txt").write_text(SENTINEL)
    return directory


@pytest.fixture
def workspace(tmp_path: Path, outside: Path) -> Workspace:
    root = tmp_path / "workspace"
    root.mkdir()
    return Workspace(root)


@pytest.fixture
def outside_untouched(outside: Path) -> Callable[[], bool]:
    """True while the outside directory holds exactly its sentinel, unchanged."""

    def untouched() -> bool:
        names = sorted(path.name for path in outside.iterdir())
        return names == ["sentinel.txt"] and (outside / "sentinel.txt").read_text() == SENTINEL

    return untouched


@pytest.fixture
def folders(tmp_path, monkeypatch) -> tuple[Path, Path, Path]:
    """(the project, the user's home, Codex's system folder), all empty; Claude Code's
    system folder is `etc-claude-code` beside them."""
    home, project, system = tmp_path / "home", tmp_path / "project", tmp_path / "etc-codex"
    for folder in (home, project, system, tmp_path / "etc-claude-code"):
        folder.mkdir()
    monkeypatch.setattr(setup_hazards, "CLAUDE_CODE_MANAGED_FOLDER", tmp_path / "etc-claude-code")
    monkeypatch.setenv("HOME", str(home))
    for name in (
        "CODEX_HOME",
        "CLAUDE_CONFIG_DIR",
        "GEMINI_CLI_HOME",
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(setup_hazards, "CODEX_SYSTEM_FOLDER", system)
    return project, home, system
