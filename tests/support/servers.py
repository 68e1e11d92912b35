"""Real server processes for tests: gunicorn (as in production) and the django-q2 worker."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from django.db import connection

from tests.support.ports import free_port  # noqa: F401  (tests and bench import it from here)
from tests.support.waiting import PATIENCE_SECONDS, wait_until

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def child_environment(**extra: str) -> dict[str, str]:
    """The environment for server processes: the test database, the same machine key."""
    settings_dict = connection.settings_dict
    env = dict(os.environ)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env["DJANGO_SETTINGS_MODULE"] = "fluidbox.settings_test"
    if connection.vendor == "postgresql":
        user = settings_dict.get("USER") or "postgres"
        password = settings_dict.get("PASSWORD") or ""
        auth = f"{user}:{password}@" if password else f"{user}@"
        host = settings_dict.get("HOST") or "127.0.0.1"
        port = settings_dict.get("PORT") or "5432"
        env["DATABASE_URL"] = f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"
    else:
        # By URL, as an operator would choose a file database (it must get the same
        # options as the embedded default; a relative name would depend on the cwd).
        env["DATABASE_URL"] = f"sqlite:///{Path(settings_dict['NAME']).resolve()}"
    env.update(extra)
    return env


class ServerProcess:
    """A process started with a command line, stopped (and restartable) by the test."""

    def __init__(self, args: list[str], env: dict[str, str], log_path: Path) -> None:
        self.args = args
        self.env = env
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.args,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    # Whom `stop` signals: the process group (gunicorn's master and workers), or only the
    # process started, which stops its own children.
    signal_group = True

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        try:
            if self.signal_group or sig == signal.SIGKILL:
                os.killpg(self.process.pid, sig)
            else:
                os.kill(self.process.pid, sig)
        except ProcessLookupError:
            return
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def gunicorn_args(bind: str, *, workers: int, threads: int) -> list[str]:
    """The command line of gunicorn serving fluidbox with the project's config."""
    return [
        str(BIN / "gunicorn"),
        "fluidbox.wsgi:application",
        "--config",
        "fluidbox/gunicorn_conf.py",
        "--bind",
        bind,
        "--workers",
        str(workers),
        "--threads",
        str(threads),
    ]


class _PortTaken(RuntimeError):
    """gunicorn exited because its port was taken."""


class WebServer(ServerProcess):
    """gunicorn with gthread workers, as `make run` serves the portal."""

    def __init__(self, tmp: Path, *, workers: int = 2, threads: int = 32, **env: str) -> None:
        self.tmp, self.workers, self.threads = tmp, workers, threads
        self.started = False
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = gunicorn_args(f"127.0.0.1:{self.port}", workers=workers, threads=threads)
        environment = child_environment(**{"FLUIDBOX_PUBLIC_URL": self.url, **env})
        super().__init__(args, environment, tmp / f"gunicorn-{self.port}.log")

    def _listen_on(self, port: int) -> None:
        """Another port, the environment as the test left it but the public URL."""
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.args = gunicorn_args(f"127.0.0.1:{port}", workers=self.workers, threads=self.threads)
        self.env["FLUIDBOX_PUBLIC_URL"] = self.url
        self.log_path = self.tmp / f"gunicorn-{port}.log"

    def start(self) -> None:
        # The port came from the kernel's free ones and another connection may take it before
        # gunicorn binds: a first start moves to another port; a restart keeps its own.
        for attempt in range(3):
            try:
                self._start_once()
                self.started = True
                return
            except _PortTaken:
                if self.started or attempt == 2:
                    raise
                self._listen_on(free_port())

    def _start_once(self) -> None:
        super().start()
        deadline = time.monotonic() + PATIENCE_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = self.log()
                if "Connection in use" in log or "Address already in use" in log:
                    raise _PortTaken(f"gunicorn could not bind:\n{log[-3000:]}")
                raise RuntimeError(f"gunicorn exited:\n{log[-3000:]}")
            try:
                # Any answer means a worker is up; a cheap page, so a slow start is not
                # made slower by piling up abandoned requests.
                httpx.get(f"{self.url}/favicon.ico", timeout=10)
                return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()  # never leave a half-started server behind
        raise RuntimeError(f"gunicorn did not start:\n{self.log()[-3000:]}")


class Worker(ServerProcess):
    """`manage.py qcluster`: timeouts, sweeps and notifications."""

    # django-q2's cluster stops its workers itself on SIGTERM; signalled too, each of them
    # leaves the cluster waiting for it until the 15 s of `stop` run out.
    signal_group = False

    def __init__(self, tmp: Path, **env: str) -> None:
        args = [str(BIN / "python"), "manage.py", "qcluster"]
        super().__init__(args, child_environment(**env), tmp / "qcluster.log")

    def wait_until_ready(self) -> None:
        """Until the worker has run a task: a probe enqueued now comes back done."""
        from django_q.models import Success
        from django_q.tasks import async_task

        probe = async_task("math.floor", 1.5)

        def probe_done() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"qcluster exited:\n{self.log()[-3000:]}")
            return Success.objects.filter(id=probe).exists()

        wait_until(probe_done, "the worker to run a probe task")
