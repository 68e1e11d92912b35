"""`/metrics` adds up files that other processes write and remove. A web server starting
next to it forgets the files of dead processes; a scrape at that moment must still answer."""

import shutil
import subprocess
import sys
import threading

from django.test import override_settings
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from governance.observability.endpoint import ProcessFilesCollector
from governance.observability.multiprocess import remove_files_of_dead_processes
from tests.conftest import Api

TOKEN = "t0ken-for-the-files-test"
# Above any Linux pid_max (2^22): never a live process.
DEAD_PIDS = range(4_200_000, 4_200_040)

WRITER = """
from prometheus_client import Counter, Histogram
Counter("fluidbox_files_test_calls", "calls", ["kind"]).labels("a").inc(3)
Histogram("fluidbox_files_test_seconds", "seconds").observe(0.2)
"""


def _files_of_one_dead_process(directory):
    """Real files, as prometheus_client writes them, from a process that has exited."""
    subprocess.run(
        [sys.executable, "-c", WRITER],
        env={"PROMETHEUS_MULTIPROC_DIR": str(directory), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return sorted(directory.glob("*.db"))


def test_a_scrape_survives_dead_processes_files_going_under_it(tmp_path, db):
    template_dir = tmp_path / "template"
    template_dir.mkdir()
    templates = _files_of_one_dead_process(template_dir)
    assert {path.name.split("_")[0] for path in templates} >= {"counter", "histogram"}
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    # One process that stays: its counter must be in every scrape.
    for template in templates:
        shutil.copy(template, metrics_dir / f"{template.stem.rsplit('_', 1)[0]}_1.db")

    stop = threading.Event()
    forgotten = []

    def servers_starting():
        # Dead processes' files appear (copied under dead pids) and a starting server
        # forgets them, over and over, while the scrapes run.
        while not stop.is_set():
            for pid in DEAD_PIDS:
                for template in templates:
                    kind = template.stem.rsplit("_", 1)[0]
                    staged = metrics_dir / f"{kind}_{pid}.staged"
                    shutil.copy(template, staged)
                    staged.replace(metrics_dir / f"{kind}_{pid}.db")
            forgotten.append(remove_files_of_dead_processes(metrics_dir))

    churn = threading.Thread(target=servers_starting, daemon=True)
    statuses = []
    with override_settings(FLUIDBOX_METRICS_TOKEN=TOKEN, FLUIDBOX_METRICS_DIR=str(metrics_dir)):
        churn.start()
        try:
            while len(forgotten) < 30 or len(statuses) < 30:
                response = Api(TOKEN).get("/metrics")
                statuses.append(response.status_code)
                assert response.status_code == 200, response.content[:500]
                assert b'fluidbox_files_test_calls_total{kind="a"}' in response.content
        finally:
            stop.set()
            churn.join()
    assert set(statuses) == {200}
    assert sum(forgotten) >= 30 * len(DEAD_PIDS)


def test_reading_file_by_file_adds_up_as_the_library_does(tmp_path):
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    for _ in range(3):
        _files_of_one_dead_process(metrics_dir)
    assert len(list(metrics_dir.glob("*.db"))) >= 6

    def exposition(collector_class):
        registry = CollectorRegistry()
        collector_class(registry, path=str(metrics_dir))
        return generate_latest(registry).decode()

    ours = exposition(ProcessFilesCollector)
    assert ours == exposition(MultiProcessCollector)
    assert 'fluidbox_files_test_calls_total{kind="a"} 9.0' in ours
    assert "fluidbox_files_test_seconds_count 3.0" in ours
