"""`make run` (scripts/serve.sh) as a supervisor stops it: SIGTERM to the whole process group.
A newcomer found the worker's parent waiting forever for children that had already gone."""

import os
import signal
import subprocess

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


def running_in(group: int) -> list[str]:
    """The group's processes that still run (a zombie has stopped; only its parent's wait is
    missing)."""
    listed = subprocess.run(
        ["ps", "-o", "stat=,args=", "-g", str(group)], capture_output=True, text=True
    ).stdout
    return [line for line in listed.splitlines() if line.strip() and line.split()[0][0] != "Z"]


def test_sigterm_to_the_process_group_stops_everything(tmp_path):
    port, mcp_port = free_port(), free_port()
    env = child_environment(FLUIDBOX_DATA_DIR=str(tmp_path / "var"))
    with open(tmp_path / "serve.log", "wb") as log:
        served = subprocess.Popen(
            ["bash", "scripts/serve.sh", str(port), str(mcp_port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    group = served.pid
    try:
        wait_until(
            lambda: serving(f"http://127.0.0.1:{port}/admin/login/"),
            "make run to serve the sign-in page",
        )
        processes = "\n".join(running_in(group))
        assert "qcluster" in processes and "gunicorn" in processes and "demo_mcp" in processes

        os.killpg(group, signal.SIGTERM)
        served.wait(60)
        wait_until(lambda: running_in(group) == [], "every process of make run to stop")
    finally:
        if running_in(group):
            os.killpg(group, signal.SIGKILL)
        served.wait(10)
