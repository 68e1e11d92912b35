"""Pytest fixtures that run real MCP servers on 127.0.0.1 as subprocesses.

Import them into a conftest (or a test module):

    from tests.mcp_servers.fixtures import demo_mcp_server, mcp_server_factory  # noqa: F401

Every process a fixture starts is killed at teardown, whatever the test did.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_servers import forked
from tests.support.ports import free_port
from tests.support.waiting import PATIENCE_SECONDS

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIGURABLE_SERVER = Path(__file__).with_name("configurable_server.py")
DEMO_TOKEN = "demo-fixture-token"


class PortTaken(RuntimeError):
    """The server could not bind its port: something took it after `free_port()` chose it."""


@dataclass
class ServerProcess:
    """One HTTP server subprocess on a loopback port, restartable on that same port.

    `command(port)` is its command line. The port comes from `free_port()`, in the kernel's
    ephemeral range, so between the choice and the server's bind an outgoing connection
    anywhere on the machine may be given it as its own port: the first start then moves to
    another port (at most three tries); a restart stays on the port the test already uses and
    tries it again until the holder lets go (a connection made while the server was down may
    have been given the port as its own, even connected to itself) or patience runs out.
    """

    command: Callable[[int], list[str]]
    stderr_path: Path
    env: dict[str, str] | None = None
    port: int = field(default_factory=free_port)
    restart_patience: float = PATIENCE_SECONDS
    process: subprocess.Popen[bytes] | forked.ForkedProcess | None = field(default=None, init=False)
    _has_listened: bool = field(default=False, init=False)

    @property
    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        if self.is_running:
            return
        if self._has_listened:
            self._restart_on_the_same_port()
            return
        for attempt in range(3):
            try:
                self._start_once()
                self._has_listened = True
                return
            except PortTaken:
                if attempt == 2:
                    raise
                self.port = free_port()

    def _restart_on_the_same_port(self) -> None:
        deadline = time.monotonic() + self.restart_patience
        while True:
            try:
                self._start_once()
                return
            except PortTaken:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        # uvicorn's graceful stop waits for every open connection to close, and fluidbox's
        # pool of upstream sessions keeps one open: a second SIGINT tells it not to wait.
        for patience in (0.25, 3):
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=patience)
                return
            except subprocess.TimeoutExpired:
                pass
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=3)

    def _start_once(self) -> None:
        argv = self.command(self.port)
        with self.stderr_path.open("ab") as stderr:
            logged_before = stderr.tell()
            if forked.forkable(argv):
                self.process = forked.start(argv, self.env, REPO_ROOT, self.stderr_path)
            else:
                self.process = subprocess.Popen(
                    argv,
                    cwd=REPO_ROOT,
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    start_new_session=True,
                )
        deadline = time.monotonic() + PATIENCE_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                with self.stderr_path.open("rb") as log:
                    log.seek(logged_before)
                    said = log.read().decode(errors="replace")
                if "address already in use" in said.lower():
                    raise PortTaken(f"port {self.port} was taken before the server bound it")
                raise RuntimeError(f"MCP test server exited at startup:\n{said[-2000:]}")
            if _listening_on_loopback(self.port):
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"MCP test server did not listen on port {self.port} in time")


def _listening_on_loopback(port: int) -> bool:
    """Whether a socket listens on 127.0.0.1:`port`, read from the kernel's table, not by
    connecting: the port is in the ephemeral range, so a probe connection may be given it as
    its own port, reach itself (a TCP self-connect) and hold the port the server then fails
    to bind ("address already in use")."""
    wanted = f"0100007F:{port:04X}"
    with open("/proc/net/tcp", encoding="ascii") as table:
        return any(
            fields[1] == wanted and fields[3] == "0A"  # 0A: LISTEN
            for fields in (line.split() for line in table.readlines()[1:])
        )


class ConfigurableMcpServer:
    """Handle on a running configurable server (tests/mcp_servers/configurable_server.py)."""

    def __init__(self, workdir: Path, tools: list[dict[str, Any]]) -> None:
        self.config_path = workdir / "config.json"
        self.log_path = workdir / "requests.jsonl"
        self._config: dict[str, Any] = {
            "tools": [],
            "page_size": None,
            "http_status": None,
            "announce_tool_changes": False,
            "legacy_only": False,
        }
        self.set_tools(tools)
        self.log_path.touch()
        self.stdio_command: tuple[str, ...] = (
            sys.executable,
            str(CONFIGURABLE_SERVER),
            "--config",
            str(self.config_path),
            "--log",
            str(self.log_path),
            "--stdio",
        )
        self._process = ServerProcess(
            command=lambda port: [*self.stdio_command[:-1], "--port", str(port)],
            stderr_path=workdir / "stderr.log",
        )

    @property
    def port(self) -> int:
        """Its port, final once `start()` has returned."""
        return self._process.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def set_tools(self, tools: list[dict[str, Any]], *, page_size: int | None = None) -> None:
        self._write(tools=tools, page_size=page_size)

    def speak_legacy_only(self, legacy: bool = True) -> None:
        """Refuse `server/discover`: clients open 2025-era stateful sessions (initialize)."""
        self._write(legacy_only=legacy)

    def announce_tool_changes(self, announce: bool = True) -> None:
        """Send `notifications/tools/list_changed` to every session when the tools change."""
        self._write(announce_tool_changes=announce)

    def set_http_status(self, status: int | None) -> None:
        """Make every HTTP request answer `status` (e.g. 401, 500); None restores MCP."""
        self._write(http_status=status)

    def requests(self) -> list[dict[str, Any]]:
        """Every request the server received, oldest first."""
        lines = self.log_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def calls(self) -> list[dict[str, Any]]:
        """The `tools/call` requests the server received, oldest first."""
        return [entry for entry in self.requests() if entry["method"] == "tools/call"]

    def requests_of(self, method: str) -> list[dict[str, Any]]:
        """The requests (or, for a notification, the sends) of one method, oldest first."""
        return [entry for entry in self.requests() if entry["method"] == method]

    def start(self) -> None:
        self._process.start()

    def stop(self) -> None:
        self._process.stop()

    def _write(self, **changes: Any) -> None:
        self._config.update(changes)
        # Written whole then renamed: the server reads the file on every request and must
        # never see half of it.
        partial = self.config_path.with_suffix(".tmp")
        partial.write_text(json.dumps(self._config), encoding="utf-8")
        partial.replace(self.config_path)


@dataclass
class DemoMcpServer:
    url: str
    expected_token: str
    process: ServerProcess


@pytest.fixture
def mcp_server_factory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., ConfigurableMcpServer]]:
    """Start configurable MCP servers: `server = mcp_server_factory(tools=[...])`."""
    started: list[ConfigurableMcpServer] = []

    def start_server(tools: list[dict[str, Any]] | None = None) -> ConfigurableMcpServer:
        server = ConfigurableMcpServer(tmp_path_factory.mktemp("mcp-server"), tools or [])
        started.append(server)
        server.start()
        return server

    try:
        yield start_server
    finally:
        for server in started:
            server.stop()


def demo_tracker_process(env: dict[str, str], stderr_path: Path) -> ServerProcess:
    """The bundled demo issue tracker (`python -m demo_mcp`) on 127.0.0.1, not yet started."""
    return ServerProcess(
        command=lambda port: (
            [sys.executable, "-m", "demo_mcp", "--host", "127.0.0.1"] + ["--port", str(port)]
        ),
        stderr_path=stderr_path,
        env=env,
    )


@pytest.fixture
def demo_mcp_server(tmp_path: Path) -> Iterator[DemoMcpServer]:
    """The bundled demo issue tracker (`python -m demo_mcp`) on a free port."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "DEMO_TRACKER_EXPECTED_TOKEN": DEMO_TOKEN,
    }
    process = demo_tracker_process(env, tmp_path / "demo-mcp-stderr.log")
    process.start()
    try:
        yield DemoMcpServer(
            url=f"http://127.0.0.1:{process.port}/mcp", expected_token=DEMO_TOKEN, process=process
        )
    finally:
        process.stop()
