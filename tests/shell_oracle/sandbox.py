"""Run scripts in real shells inside a throwaway bubblewrap sandbox, under strace.

The sandbox (see RECIPES.md, "Watching what a real shell does"): a root built from
a tmpfs with /usr and /etc bound read-only (/etc/shadow and /etc/gshadow hidden behind
empty files, root's home in /etc/passwd pointed at the workspace like $HOME), then
remounted read-only, so a write anywhere but /workspace
and the private /tmp fails with EROFS while strace still shows the attempt; a
private /dev and /proc; no network, pid, uts, ipc or cgroup sharing; every
capability dropped; it dies with its parent. /workspace is a scratch folder on the
host, restored from the same fixture before every job.

strace runs *outside* the sandbox, on bwrap itself: a script cannot reach the
trace file, and `--pidns-translation` gives every pid in one namespace. A batch
of jobs costs one sandbox start: a small driver (driver.py) runs the jobs one by
one; the trace is split back into one `Observation` per job (observation.py).
If a job kills the driver, the jobs after it run again in a new batch.
"""

import functools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.shell_oracle.observation import Observation
from tests.shell_oracle.replay import TRACED_CALLS, observe
from tests.shell_oracle.strace_log import read_calls

SHELLS = {
    "bash": "/usr/bin/bash",
    "sh": "/usr/bin/dash",
    "dash": "/usr/bin/dash",
    "zsh": "/usr/bin/zsh",
}
BASELINE_SHELLS = ("bash", "sh", "zsh")
WORKING_DIRECTORY = "/workspace"  # every job starts there
MARKER = "/oracle-marker/"
SYSTEM_PYTHON = "/usr/bin/python3"
DRIVER = Path(__file__).with_name("driver.py")
ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
    # A program's own caches, logs and temporary files (npm's ~/.npm, pip's ~/.cache,
    # Python's tempfile) stay in the workspace, so a write the oracle sees outside it is
    # one the script asked for.
    "HOME": "/workspace/.home",
    "USER": "root",
    "LOGNAME": "root",
    "SHELL": "/bin/bash",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "PWD": "/workspace",
    "TMPDIR": "/workspace/.tmp",
}
# What /workspace holds before every job: files to read, a folder to delete, a git
# repository with one commit, and planted programs (what an agent allowed to write in
# the workspace could have left there): each one, when run, touches /workspace/PWNED.
FIXTURE_FILES = {
    "README.md": "# demo project\n",
    "notes.txt": "alpha\nbeta\n",
    "src/app.py": "print('hello')\n",
    "tests/test_app.py": "def test_ok(tmp_path):\n    assert tmp_path.is_dir()\n",
    "victim/keep.txt": "must survive\n",
    "victim/inner/deep.txt": "must survive\n",
}
PLANTED = "#!/bin/sh\n/usr/bin/touch /workspace/PWNED\n"
PLANTED_PROGRAMS = ("bin/ls", "bin/cat", "bin/git", "bin/echo", "bin/pre-commit")


@dataclass(frozen=True)
class Job:
    """One script for one shell. `stdin=True` feeds the script on standard input instead
    of `-c` (the only way to hand a shell a NUL byte: argv strings end at NUL)."""

    script: str
    shell: str = "bash"
    timeout: float = 10.0
    stdin: bool = False

    def argv(self) -> list[str]:
        program = SHELLS[self.shell]
        name = os.path.basename(program) if self.shell != "sh" else "sh"
        return [name, "-s"] if self.stdin else [name, "-c", self.script]


class SandboxUnavailable(RuntimeError):
    """bwrap, strace or user namespaces are missing: the oracle cannot run here."""


@functools.cache
def unavailable_reason() -> str | None:
    """Why the sandbox cannot run on this machine, or None when it can."""
    for tool in ("bwrap", "strace"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install -y bubblewrap strace)"
    for program in (SYSTEM_PYTHON, *set(SHELLS.values())):
        if not os.access(program, os.X_OK):
            return f"{program} is missing (apt-get install -y zsh dash python3)"
    try:
        [observation] = run_jobs([Job("echo ready")])
    except (SandboxUnavailable, OSError, subprocess.SubprocessError) as error:
        return f"the sandbox does not start here: {error}"
    if observation.stdout != "ready\n":
        return f"the sandbox does not run a shell here: {observation.stderr[:300]}"
    return None


def run_script(script: str, shell: str = "bash", timeout: float = 10.0) -> Observation:
    [observation] = run_jobs([Job(script, shell, timeout)])
    return observation


def run_jobs(jobs: Sequence[Job], batch_size: int = 100, workers: int = 2) -> list[Observation]:
    """Observations of every job, in order. Batches run `workers` at a time, each in its
    own sandbox; a batch that dies is resumed after its last job."""
    batches = [list(jobs[i : i + batch_size]) for i in range(0, len(jobs), batch_size)]
    if len(batches) <= 1 or workers <= 1:
        return [o for batch in batches for o in _run_resuming(batch)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [o for done in pool.map(_run_resuming, batches) for o in done]


def _run_resuming(jobs: list[Job]) -> list[Observation]:
    observations: list[Observation] = []
    while len(observations) < len(jobs):
        observations += _run_batch(jobs[len(observations) :])
    return observations


def _fixture(folder: Path) -> None:
    for name, text in FIXTURE_FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    environment = {
        "PATH": ENVIRONMENT["PATH"],
        "HOME": str(folder.parent),
        "GIT_AUTHOR_NAME": "fixture",
        "GIT_AUTHOR_EMAIL": "fixture@example.com",
        "GIT_COMMITTER_NAME": "fixture",
        "GIT_COMMITTER_EMAIL": "fixture@example.com",
    }
    for command in (
        ["git", "init", "-q", "--template=", "."],
        ["git", "config", "user.name", "fixture"],
        ["git", "config", "user.email", "fixture@example.com"],
        ["git", "add", "README.md", "notes.txt", "src"],
        ["git", "commit", "-q", "-m", "fixture"],
    ):
        subprocess.run(command, check=True, env=environment, cwd=folder)
    (folder / ".tmp").mkdir()
    (folder / ".home").mkdir()
    for name in PLANTED_PROGRAMS:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PLANTED, encoding="utf-8")
        path.chmod(0o755)


def _passwd() -> str:
    # The JVM and others take the home folder from the passwd entry, not from $HOME: the
    # sandbox's root lives in the workspace too (see ENVIRONMENT).
    lines = []
    for line in Path("/etc/passwd").read_text(encoding="utf-8").splitlines():
        fields = line.split(":")
        if len(fields) == 7 and fields[2] == "0":
            fields[5] = ENVIRONMENT["HOME"]
        lines.append(":".join(fields))
    return "\n".join(lines) + "\n"


def _bwrap(oracle: Path, scratch: Path, hidden: Path) -> list[str]:
    binds = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for link in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
        target = os.readlink(f"/{link}") if os.path.islink(f"/{link}") else None
        if target is not None:
            binds += ["--symlink", target, f"/{link}"]
        elif os.path.isdir(f"/{link}"):
            binds += ["--ro-bind", f"/{link}", f"/{link}"]
    for secret in ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"):
        if os.path.exists(secret):
            binds += ["--ro-bind", str(hidden), secret]
    binds += ["--ro-bind", str(oracle / "passwd"), "/etc/passwd"]
    return [
        "bwrap",
        "--tmpfs", "/",
        *binds,
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--dir", "/root",
        "--dir", "/home",
        "--bind", str(scratch), "/workspace",
        "--ro-bind", str(oracle), "/oracle",
        "--remount-ro", "/",
        "--chdir", "/workspace",
        "--clearenv",
        "--unshare-net", "--unshare-pid", "--unshare-uts", "--unshare-ipc",
        "--unshare-cgroup-try",
        "--cap-drop", "ALL",
        "--die-with-parent",
        "--new-session",
    ]  # fmt: skip


def _run_batch(jobs: list[Job]) -> list[Observation]:
    # The first jobs are `:` in each shell: their opens are each shell's own start-up,
    # which every later process of that shell repeats (a job's shell or one it starts).
    baselines = [Job(":", shell, 5.0) for shell in BASELINE_SHELLS]
    everything = baselines + list(jobs)
    with tempfile.TemporaryDirectory(prefix="fb-oracle-") as folder:
        root = Path(folder)
        oracle, scratch, hidden = root / "oracle", root / "workspace", root / "hidden"
        for path in (oracle, scratch, oracle / "fixture"):
            path.mkdir()
        hidden.write_text("")
        (oracle / "passwd").write_text(_passwd(), encoding="utf-8")
        _fixture(oracle / "fixture")
        shutil.copy(DRIVER, oracle / "driver.py")
        batch = {
            "environment": ENVIRONMENT,
            "fixture": "/oracle/fixture",
            "jobs": [{"argv": j.argv(), "timeout": j.timeout,
                      "stdin": j.script if j.stdin else None} for j in everything],
        }  # fmt: skip
        (oracle / "batch.json").write_text(json.dumps(batch), encoding="utf-8")
        trace = root / "trace"
        command = [
            "strace", "-f", "--seccomp-bpf", "--pidns-translation", "-qq",
            "-e", "signal=none", "-y", "-x", "-s", "1000000",
            "-e", f"trace={TRACED_CALLS}", "-o", str(trace),
            *_bwrap(oracle, scratch, hidden),
            SYSTEM_PYTHON, "-I", "-S", "/oracle/driver.py", "/oracle/batch.json",
        ]  # fmt: skip
        budget = sum(job.timeout for job in everything) + 30 + 0.5 * len(everything)
        try:
            finished = subprocess.run(
                command, capture_output=True, timeout=budget, cwd="/", check=False
            )
        except subprocess.TimeoutExpired as error:
            raise SandboxUnavailable(
                f"the sandbox batch did not finish in {budget:.0f} s"
            ) from error
        results = [json.loads(line) for line in finished.stdout.decode().splitlines() if line]
        if not results and finished.returncode != 0:
            raise SandboxUnavailable(finished.stderr.decode("utf-8", "replace")[-2000:])
        observations = [Observation(job.script, job.shell) for job in everything]
        with trace.open(encoding="utf-8", errors="surrogateescape") as lines:
            calls = list(read_calls(lines))
    baseline_jobs = {
        os.path.basename(os.path.realpath(SHELLS[shell])): index
        for index, shell in enumerate(BASELINE_SHELLS)
    }
    observe(calls, observations, MARKER, baseline_jobs)
    for result in results:
        observation = observations[result["index"]]
        observation.exit_status = result["status"]
        observation.timed_out = result["timed_out"]
        observation.seconds = result["seconds"]
        observation.stdout = result["stdout"]
        observation.stderr = result["stderr"]
    done = len(results) - len(baselines)
    if done < len(jobs):
        # The job after the last result killed the driver: keep what the trace saw of it.
        observations[len(results)].complete = False
        done += 1
    return observations[len(baselines) : len(baselines) + max(done, 1)]
