"""prometheus_client's multiprocess mode: every process (gunicorn workers, the django-q2
worker, one-off commands) writes its values to files in PROMETHEUS_MULTIPROC_DIR, and
`/metrics` adds them up.

No Django and no prometheus_client at import: the gunicorn master imports this, and
prometheus_client picks its value class once, at its own import, from the environment.
"""

import os
from pathlib import Path


def _pid_of(path: Path) -> int | None:
    # prometheus_client names its files `<type>[_<mode>]_<pid>.db`.
    tail = path.stem.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, and not ours to judge
    return True


def remove_files_of_dead_processes(directory: str | Path) -> int:
    """At the web server's start: forget every process that is gone (its counters restart
    from zero, which Prometheus reads as a reset), keep the live ones (a django-q2 worker
    started earlier keeps counting). A later process reusing a dead one's pid would
    otherwise carry on from its numbers."""
    removed = 0
    for path in Path(directory).glob("*.db"):
        pid = _pid_of(path)
        if pid is not None and not _alive(pid):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def process_exited(directory: str | Path, pid: int) -> None:
    """A gunicorn worker exited: its live gauges go (its counters stay, as they must)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid, str(directory))
