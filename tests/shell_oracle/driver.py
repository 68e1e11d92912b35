"""Runs a batch of scripts one after another INSIDE the sandbox (the system python3).

Before each job it puts /workspace back as the fixture has it and empties /tmp, opens the
marker path `/oracle-marker/<n>` (which fails, but the trace shows it: that is how
the host knows which job a process belongs to), then starts the job's shell in its
own session, waits (within the job's time) for every process the job started, even one
that left that session, and kills what is left, so nothing a job leaves in the
background runs into the next one. One JSON line per job on stdout.
Standard library only: this file runs under /usr/bin/python3, not the project venv.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

MARKER = "/oracle-marker/"
OUTPUT_LIMIT = 4096


def _remove(path: str) -> None:
    """Remove a file or a whole tree, even one a job made unreadable (its owner can
    always chmod it back; no capability is needed for that)."""

    def retry(function, failed, _info):
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(failed), 0o700)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, 0o700)
                shutil.rmtree(failed, ignore_errors=True)
            else:
                function(failed)

    with contextlib.suppress(OSError):
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
            shutil.rmtree(path, onerror=retry)
        else:
            os.unlink(path)


def _walk(root: str) -> dict[str, tuple]:
    """Every path under `root` with what identifies its state: a folder by its inode and
    mode (its ctime moves whenever an entry is added), anything else by inode, ctime
    and mode (any change to a file's content or metadata moves its ctime)."""
    found: dict[str, tuple] = {}
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                stat = entry.stat(follow_symlinks=False)
            except OSError:  # gone since the folder was listed
                continue
            if entry.is_dir(follow_symlinks=False):
                found[entry.path] = ("dir", stat.st_ino, stat.st_mode)
                stack.append(entry.path)
            else:
                found[entry.path] = ("file", stat.st_ino, stat.st_ctime_ns, stat.st_mode)
    return found


class Workspace:
    """/workspace put back to the fixture before each job, touching only what the last
    job changed: a full copy per job would cost more than most jobs (every call of it
    is traced)."""

    def __init__(self, fixture: str):
        self.fixture = fixture
        self.expected: dict[str, tuple] = {}
        self.root_mode = os.stat(fixture).st_mode
        self.paths = sorted(self._fixture_paths())

    def restore(self) -> None:
        if os.listdir("/tmp"):
            for name in os.listdir("/tmp"):
                _remove(os.path.join("/tmp", name))
        if os.stat("/workspace").st_mode != self.root_mode:
            os.chmod("/workspace", self.root_mode)
        current = _walk("/workspace")
        if current == self.expected and self.expected:
            return
        removed: list[str] = []
        for path in sorted(current):
            if any(path.startswith(gone + "/") for gone in removed):
                continue
            want = self.expected.get(path)
            if want is None or want[0] != current[path][0] or want[1] != current[path][1]:
                _remove(path)
                removed.append(path)
            elif want != current[path]:
                if want[0] == "dir":
                    os.chmod(path, want[2])
                else:
                    _remove(path)
                    removed.append(path)
        for path in [p for p in self.paths if not os.path.lexists(p)]:
            source = self.fixture + path[len("/workspace") :]
            if os.path.isdir(source) and not os.path.islink(source):
                os.mkdir(path)
                shutil.copystat(source, path)
            else:
                shutil.copy2(source, path, follow_symlinks=False)
        self.expected = _walk("/workspace")

    def _fixture_paths(self) -> list[str]:
        paths = []
        for folder, folders, files in os.walk(self.fixture):
            for name in folders + files:
                paths.append("/workspace" + os.path.join(folder, name)[len(self.fixture) :])
        return paths


def _jobs_processes() -> list[int]:
    """The live processes of the jobs. In this PID namespace every process but its init (1)
    and this driver is a job's, even one that left the job's session (`setsid rm …`): it
    must not outlive its job and change /workspace while the next one is set up."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (1, os.getpid()):
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2 :].split()[0] != b"Z":
            found.append(int(name))
    return found


def _read(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    data = os.read(fd, OUTPUT_LIMIT)
    os.close(fd)
    return data


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        batch = json.load(handle)
    environment = batch["environment"]
    workspace = Workspace(batch["fixture"])
    for index, job in enumerate(batch["jobs"]):
        workspace.restore()
        with contextlib.suppress(OSError):
            os.open(f"{MARKER}{index}", os.O_RDONLY)
        argv = [os.fsencode(word) for word in job["argv"]]
        # Memory files, not pipes: a job's background process holding a pipe open would
        # keep the driver waiting; nothing of this shows in the job's filesystem.
        stdin, stdout, stderr = (os.memfd_create(name) for name in ("in", "out", "err"))
        if job.get("stdin") is not None:
            os.write(stdin, os.fsencode(job["stdin"]))
            os.lseek(stdin, 0, os.SEEK_SET)
        process = subprocess.Popen(
            argv,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd="/workspace",
            env={k.encode(): v.encode() for k, v in environment.items()},
            start_new_session=True,
        )
        started = time.monotonic()
        deadline = started + job["timeout"]
        timed_out = False
        try:
            process.wait(timeout=job["timeout"])
        except subprocess.TimeoutExpired:
            timed_out = True
        # What the script started in the background still runs: let it finish, within
        # the job's time, or its effects would be lost to the kill below.
        while not timed_out and _jobs_processes():
            if time.monotonic() > deadline:
                timed_out = True
                break
            time.sleep(0.01)
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        for pid in _jobs_processes():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        process.wait()
        gone_by = time.monotonic() + 5
        while _jobs_processes() and time.monotonic() < gone_by:  # killed, not yet gone
            time.sleep(0.01)
        out, err = (_read(fd) for fd in (stdout, stderr))
        os.close(stdin)
        result = {
            "index": index,
            "status": process.returncode,
            "timed_out": timed_out,
            "seconds": round(time.monotonic() - started, 4),
            "stdout": out[:OUTPUT_LIMIT].decode("utf-8", "replace"),
            "stderr": err[:OUTPUT_LIMIT].decode("utf-8", "replace"),
        }
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
