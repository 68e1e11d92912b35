"""`make run` (scripts/serve.sh) stopped as a supervisor or a terminal stops it: SIGTERM or
SIGINT to the whole process group. A newcomer found the worker's parent waiting forever for
children that had already gone; another found, after Ctrl-C, the worker's own workers left
running for good, holding the SQLite file or a PostgreSQL connection."""

import os
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.support.servers import ROOT, child_environment, free_port
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def serving(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def running_with(data_dir: Path) -> list[str]:
    """Every live process started with this data folder, wherever it now hangs in the process
    tree (a worker whose parent went is adopted by init, out of any group it was in)."""
    marker = f"FLUIDBOX_DATA_DIR={data_dir}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker not in (proc / "environ").read_bytes().split(b"\0"):
                continue
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if state != "Z":  # a zombie has stopped; only its parent's wait is missing
            found.append(f"{proc.name} {command}")
    return found


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    "stop",
    [signal.SIGTERM, signal.SIGINT],
    ids=["a supervisor's SIGTERM", "a terminal's Ctrl-C"],
)
def test_a_signal_to_the_process_group_stops_everything(tmp_path, stop):
    port, mcp_port = free_port(), free_port()
    data_dir = tmp_path / "var"
    # One web worker and one task worker: each is a process of the group all the same, and
    # every one more is seconds of CPU at start.
    env = child_environment(FLUIDBOX_DATA_DIR=str(data_dir), WEB_WORKERS="1", Q_WORKERS="1")
    with open(tmp_path / "serve.log", "wb") as log:
        served = subprocess.Popen(
            ["bash", "scripts/serve.sh", str(port), str(mcp_port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # As a terminal starts it: a job this suite runs under (`cmd &` in a script, as
            # CI does) inherits SIGINT ignored, which bash then may not trap.
            preexec_fn=_interruptible,
        )
    try:
        wait_until(
            lambda: serving(f"http://127.0.0.1:{port}/admin/login/"),
            "make run to serve the sign-in page",
        )
        processes = "\n".join(running_with(data_dir))
        assert "qcluster" in processes and "gunicorn" in processes and "demo_mcp" in processes

        os.killpg(served.pid, stop)  # the whole group, as a terminal or a supervisor does
        served.wait(60)
        wait_until(lambda: running_with(data_dir) == [], "every process of make run to stop")
    finally:
        for line in running_with(data_dir):
            os.kill(int(line.split()[0]), signal.SIGKILL)
        served.wait(10)
    assert b"Perhaps out of memory" not in (tmp_path / "serve.log").read_bytes()
