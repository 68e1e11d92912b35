"""Runs a batch of scripts one after another INSIDE the sandbox (the system python3).

Before each job it restores /workspace from the fixture and empties /tmp, opens the
marker path `/oracle-marker/<n>` (which fails, but the trace shows it: that is how
the host knows which job a process belongs to), then starts the job's shell in its
own session and kills the whole session when the shell is done, so nothing a job
leaves in the background runs into the next one. One JSON line per job on stdout.
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


def _wipe(folder: str) -> None:
    def retry(function, path, _info):
        # A job may have made a folder unreadable: its owner can always chmod it back.
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
            shutil.rmtree(path, ignore_errors=True)
        else:
            function(path)

    os.chmod(folder, 0o755)
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, onerror=retry)
            else:
                os.unlink(path)
        except OSError:
            pass


def _restore(fixture: str) -> None:
    _wipe("/workspace")
    _wipe("/tmp")
    os.mkdir("/workspace/.tmp")
    for name in os.listdir(fixture):
        source, target = os.path.join(fixture, name), os.path.join("/workspace", name)
        if os.path.isdir(source):
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target)


def _session_alive(session: int) -> bool:
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[3]) == session and fields[0] != b"Z":
            return True
    return False


def _read(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    data = os.read(fd, OUTPUT_LIMIT)
    os.close(fd)
    return data


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        batch = json.load(handle)
    environment = batch["environment"]
    for index, job in enumerate(batch["jobs"]):
        _restore(batch["fixture"])
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
        deadline = time.monotonic() + job["timeout"]
        timed_out = False
        try:
            process.wait(timeout=job["timeout"])
        except subprocess.TimeoutExpired:
            timed_out = True
        # What the script started in the background still runs: let it finish, within
        # the job's time, or its effects would be lost to the kill below.
        while not timed_out and _session_alive(process.pid):
            if time.monotonic() > deadline:
                timed_out = True
                break
            time.sleep(0.01)
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        out, err = (_read(fd) for fd in (stdout, stderr))
        os.close(stdin)
        result = {
            "index": index,
            "status": process.returncode,
            "timed_out": timed_out,
            "stdout": out[:OUTPUT_LIMIT].decode("utf-8", "replace"),
            "stderr": err[:OUTPUT_LIMIT].decode("utf-8", "replace"),
        }
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
