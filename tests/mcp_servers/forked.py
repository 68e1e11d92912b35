"""Test MCP servers started as forks of a process that has already imported the `mcp` SDK.

A new Python process spends about 0.7 s of CPU importing the SDK (its protocol types are
pydantic models built at import), and the suite starts hundreds of servers: on CI's two
cores that was a tenth of the whole suite's CPU. multiprocessing's forkserver imports the
SDK once per pytest worker; each server is then a fork of it that runs the very command
line `python …` would have run: its own process, session (so a signal to its group reaches
it alone), environment, working directory, standard streams and exit status. Only the
import is shared, and nothing else is loaded there: no Django, no database connection.
"""

from __future__ import annotations

import multiprocessing
import os
import runpy
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

# Imported once in the forkserver: what the test servers and the demo tracker import.
PRELOADED = ["mcp.server.mcpserver", "mcp.server.stdio", "demo_mcp.server", "uvicorn"]

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(PRELOADED)


class ForkedProcess:
    """The parts of `subprocess.Popen` the fixtures use, for a forked server."""

    def __init__(self, process: multiprocessing.process.BaseProcess, argv: Sequence[str]):
        self._process = process
        self.args = list(argv)
        self.pid = process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self._process.exitcode


def forkable(argv: Sequence[str]) -> bool:
    """Whether `argv` is this interpreter running a module (`-m name`) or a script, with
    no interpreter option the fork could not honour."""
    if len(argv) < 2 or argv[0] != sys.executable:
        return False
    if argv[1] == "-m":
        return len(argv) >= 3
    return argv[1].endswith(".py") and Path(argv[1]).is_file()


def start(
    argv: Sequence[str], env: Mapping[str, str] | None, cwd: Path, stderr_path: Path
) -> ForkedProcess:
    """`argv` (see `forkable`) run in a fork of the forkserver, as
    `Popen(argv, env=env, cwd=cwd, stdin=DEVNULL, stdout=DEVNULL, stderr=<appended to
    stderr_path>, start_new_session=True)` would run it."""
    environment = dict(os.environ if env is None else env)
    process = _context.Process(
        target=_run, args=(list(argv), environment, str(cwd), str(stderr_path)), daemon=False
    )
    process.start()
    return ForkedProcess(process, argv)


def _run(argv: list[str], env: dict[str, str], cwd: str, stderr_path: str) -> None:
    os.setsid()
    os.chdir(cwd)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    stderr = os.open(stderr_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(stderr, 2)
    os.close(devnull)
    os.close(stderr)
    os.environ.clear()
    os.environ.update(env)
    if argv[1] == "-m":
        # `python -m` puts the working folder first on the path.
        sys.path.insert(0, cwd)
        sys.argv = [argv[2], *argv[3:]]
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    else:
        # `python script.py` puts the script's folder first on the path.
        sys.path.insert(0, str(Path(argv[1]).resolve().parent))
        sys.argv = argv[1:]
        runpy.run_path(argv[1], run_name="__main__")
