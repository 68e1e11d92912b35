"""What every bench sets up before it measures: Django in this process, a throwaway
PostgreSQL database, fluidbox served as in production (gunicorn, production settings), an org
with its policy and bundle, runs and their session tokens; and the figures they all read (CPU
from /proc, the load average, percentiles).

Nothing here measures. A script imports it after putting the checkout on `sys.path`:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench import harness

Django is imported only inside the functions, so that a script can set its environment (the
production settings of a throwaway database) before Django reads it.
"""

import io
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SANDBOX_BUNDLE = ROOT / "runner" / "bundles" / "sandbox-basic.yaml"

# The policy and bundle of the benches that only need a run to append to or decide for.
READ_POLICY = 'name: bench\nrules:\n  - {pattern: "read_file:*", action: ALWAYS}\n'
READ_BUNDLE = "name: bench\ntools:\n  - {name: read_file, access: read}\n"


# --- Django in this process ------------------------------------------------------------------


def django_setup() -> None:
    """Django for a bench measuring in this process, on whatever DATABASE_URL names (SQLite
    when unset) with the development settings unless the shell says otherwise. (A bench
    serving fluidbox sets the production environment itself and calls `django.setup()`.)"""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fluidbox.settings")
    os.environ.setdefault("FLUIDBOX_DEVELOPMENT", "1")
    import django
    from django.apps import apps

    if not apps.ready:  # a bench importing another's workload sets up once
        django.setup()


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


# --- an org, its policy and bundle, runs -----------------------------------------------------


def bench_org(*, slug: str, policy: str, bundle: str):
    """A new org with `policy` saved and `bundle` imported, through the services."""
    from governance.services.bundles import bundle_import
    from governance.services.orgs import org_create
    from governance.services.policies import policy_save

    org = org_create(slug=slug)
    policy_save(org=org, text=policy, author=None)
    bundle_import(org=org, text=bundle)
    return org


def bench_runs(
    org,
    count: int,
    *,
    agent: str = "bench",
    autonomy: str = "supervised",
    budget_tokens: int = 1,
    bundles: tuple[str, ...] = ("bench",),
    connections: tuple[str, ...] = (),
) -> list:
    """`count` runs of the policy named `bench`; each item has `.run` and `.session_token`."""
    from governance.services.runs import run_create

    return [
        run_create(
            org=org,
            agent=agent,
            policy_name="bench",
            autonomy=autonomy,
            source={"kind": "manual"},
            budget_tokens=budget_tokens,
            bundles=list(bundles),
            connections=list(connections),
        )
        for _ in range(count)
    ]


def runs_write(path: Path, created: list) -> None:
    """The runs' ids and session tokens, one `<run id> <token>` a line, for the processes
    (wrk, another bench) that call as those runs."""
    path.write_text("".join(f"{item.run.pk} {item.session_token}\n" for item in created))


def runs_read(path: Path) -> list[tuple[str, str]]:
    return [tuple(line.split()) for line in path.read_text().splitlines()]


# --- a throwaway PostgreSQL database -----------------------------------------------------------


def throwaway_database(base_url: str) -> str:
    """`<name>_gate_load` next to the database `base_url` names, dropped and created empty."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("postgres", "postgresql"):
        sys.exit("this bench needs DATABASE_URL=postgres://… (the production database)")
    name = f"{parts.path.lstrip('/') or 'fluidbox'}_gate_load"
    with _maintenance(parts) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}"))


def drop_database(url: str) -> None:
    parts = urlsplit(url)
    with _maintenance(parts) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{parts.path.lstrip("/")}" WITH (FORCE)')


def _maintenance(parts):
    import psycopg

    return psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True)


def server_version(url: str) -> str:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SHOW server_version").fetchone()[0]


# --- fluidbox served as in production --------------------------------------------------------


def production_environment(database_url: str, workdir: Path, **extra: str) -> dict[str, str]:
    """This process's environment with the production settings on `database_url`: a fresh
    secret and machine key, data in `workdir`, and no development or debug switch."""
    from cryptography.fernet import Fernet

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "fluidbox.settings",
        "DATABASE_URL": database_url,
        "SECRET_KEY": secrets.token_urlsafe(40),
        "FLUIDBOX_DATA_DIR": str(workdir),
        "FLUIDBOX_MACHINE_KEY": Fernet.generate_key().decode(),
        "LOG_LEVEL": "WARNING",
        **extra,
    }
    for name in ("FLUIDBOX_DEVELOPMENT", "DEBUG"):
        env.pop(name, None)
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Gunicorn:
    def __init__(
        self, env: dict[str, str], workers: int, threads: int, log: Path, runs_file: Path
    ) -> None:
        import httpx

        self.runs_file = runs_file
        self.postmaster = postmaster_pid(env["DATABASE_URL"])
        self.database_url = env["DATABASE_URL"]
        self.pooled = int(env.get("DB_POOL_SIZE") or 0) > 0
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        args = [
            str(BIN / "gunicorn"),
            "fluidbox.wsgi:application",
            "--config",
            "fluidbox/gunicorn_conf.py",
            "--bind",
            f"127.0.0.1:{self.port}",
        ]
        env = {**env, "WEB_WORKERS": str(workers), "WEB_THREADS": str(threads)}
        with open(log, "ab") as out:
            self.process = subprocess.Popen(
                args,
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                sys.exit(f"gunicorn exited:\n{log.read_text()[-3000:]}")
            try:
                httpx.get(f"{self.url}/v1/schema", timeout=2).raise_for_status()
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        self.stop()
        sys.exit(f"gunicorn did not start:\n{log.read_text()[-3000:]}")

    def database_cpu(self) -> float | None:
        """PostgreSQL's CPU so far. With the pool, only this database's backends (they
        outlive the requests); with a connection per request, the whole server's, since the
        backends that exited are only counted in the postmaster's total."""
        if self.pooled:
            return backends_cpu_seconds(self.database_url)
        return database_cpu_seconds(self.postmaster) if self.postmaster else None

    def workers(self) -> list[int]:
        children = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == self.process.pid:
                children.append(int(entry.name))
        return sorted(children)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


# --- CPU, memory and load, from /proc --------------------------------------------------------


def cpu_seconds(*pids: int) -> float:
    """User + system CPU the processes have used (PostgreSQL backends too: same machine)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLOCK_TICKS


def postmaster_pid(url: str) -> int | None:
    """The PostgreSQL server's main process when it runs on this machine, else None."""
    import psycopg

    with psycopg.connect(url) as conn:
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    try:
        status = Path(f"/proc/{backend}/status").read_text()
    except OSError:
        return None  # a server elsewhere
    parent = int(next(line for line in status.splitlines() if line.startswith("PPid:")).split()[1])
    return parent if "postgres" in Path(f"/proc/{parent}/comm").read_text() else None


def backends_cpu_seconds(url: str) -> float | None:
    """CPU so far of the PostgreSQL backends connected to this database (not this look-up's
    own). With the pool they live through a whole phase, so the difference between two
    readings is what the requests cost PostgreSQL, and other databases on the same server
    (other benches, test suites) do not count. None for a server elsewhere."""
    import psycopg

    with psycopg.connect(url) as conn:
        pids = [
            pid
            for (pid,) in conn.execute(
                "SELECT pid FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ]
    try:
        return cpu_seconds(*pids)
    except OSError:
        return None


def database_cpu_seconds(postmaster: int) -> float:
    """CPU of the PostgreSQL server so far: the postmaster, the backends that have exited
    (reaped into its cutime/cstime) and the ones still running."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited while we looked
        pid, parent = int(stat.parent.name), int(fields[1])
        if pid == postmaster:
            total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        elif parent == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / CLOCK_TICKS


def memory_kib(pid: int) -> dict[str, int]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            values[key] = int(rest.split()[0])
    return values


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


# --- figures -----------------------------------------------------------------------------------


def percentile(samples, q: float) -> float:
    """The sample at rank `q` (0 to 1) of the sorted samples, no interpolation: p99 of 100
    samples is the largest."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def wsgi_post(path: str, body: dict, headers: dict) -> dict:
    """The WSGI environ of a JSON POST to the application called in-process."""
    raw = json.dumps(body).encode()
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(raw)),
        "HTTP_HOST": "127.0.0.1:8000",
        "wsgi.input": io.BytesIO(raw),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
        **headers,
    }


def start_demo_tracker(port: int, env: dict, token: str) -> subprocess.Popen:
    """The demo MCP tracker on 127.0.0.1:`port`, expecting `token`; returns once it answers."""
    import httpx

    tracker = subprocess.Popen(
        [sys.executable, "-m", "demo_mcp", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env={**env, "DEMO_TRACKER_EXPECTED_TOKEN": token},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return tracker
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                tracker.kill()
                sys.exit("the demo tracker did not start")
            time.sleep(0.1)


class OtlpReceiverProcess:
    """tests/support/receivers.py's OTLP/HTTP receiver in a process of its own, keeping the
    bodies undecoded while the bench runs (its CPU is not fluidbox's); `stop()` decodes them
    and returns how many spans came."""

    _CODE = (
        "import sys; from tests.support.receivers import OtlpReceiver; "
        "r = OtlpReceiver(decode=False).start(); print(r.endpoint, flush=True); "
        "sys.stdin.read(); print(r.span_count(), flush=True)"
    )

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", self._CODE],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.endpoint = self.process.stdout.readline().strip()

    def stop(self) -> int:
        """The spans received (the process ends with it)."""
        count, _ = self.process.communicate(timeout=300)
        return int(count.strip() or 0)
