"""gunicorn settings: gthread workers, so a parked approval wait holds a thread (and no
database connection), not a whole worker process."""

import gc
import importlib
import itertools
import os

# The settings decide where every process writes its metrics (PROMETHEUS_MULTIPROC_DIR)
# and export it; imported here, in the master, so the workers it forks inherit it.
_settings = importlib.import_module(
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fluidbox.settings")
)

workers = int(os.environ.get("WEB_WORKERS", "2"))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "128"))
timeout = 60
graceful_timeout = 10
keepalive = 5
accesslog = os.environ.get("WEB_ACCESS_LOG") or None
# gunicorn's control socket (on by default since 25) would let any process of this user add,
# remove or restart workers or stop the gate, and keeps a thread in the master that is
# stopped and restarted around every fork. Nothing of fluidbox uses it.
control_socket_disable = True


def on_starting(server):
    if _settings.FLUIDBOX_METRICS_DIR:
        from governance.observability.multiprocess import remove_files_of_dead_processes

        remove_files_of_dead_processes(_settings.FLUIDBOX_METRICS_DIR)
    # A second listener for /metrics alone, without a token (the listeners are opened right
    # after this hook, so it adds to whatever --bind said).
    extra = _settings.FLUIDBOX_METRICS_BIND
    if extra and extra not in server.cfg.bind:
        server.cfg.set("bind", [*server.cfg.bind, extra])


def child_exit(server, worker):
    if _settings.FLUIDBOX_METRICS_DIR:
        from governance.observability.multiprocess import process_exited

        process_exited(_settings.FLUIDBOX_METRICS_DIR, worker.pid)


def post_worker_init(worker):
    # By now the worker has imported Django, every app and the URL patterns: objects that
    # live as long as the process. Freezing them keeps each full garbage collection from
    # walking them again; measured under bench/gate_load.py, full collections went from
    # 70–370 ms (every thread stalled, the p99 at half load with them) to mostly under
    # 35 ms (the odd one longer when the CPUs are saturated).
    gc.freeze()
    from django.core.signals import request_finished

    request_finished.connect(_freeze_once_warm, weak=False)


# The first requests import what the URL patterns did not (the views' modules, DRF's
# renderers, psycopg's types) and fill the process's caches: some 25,000 more objects that
# every full collection walked again, 7–34 ms of CPU each while every thread waits. Frozen
# too after this many requests (one collection first, so no garbage is frozen with them),
# full collections took 2–15 ms (most under 7) under bench/gate_load.py.
FREEZE_AFTER_REQUESTS = 1000
_requests_seen = itertools.count(1)


def _freeze_once_warm(**kwargs):
    if next(_requests_seen) == FREEZE_AFTER_REQUESTS:
        from django.core.signals import request_finished

        request_finished.disconnect(_freeze_once_warm)
        gc.collect()
        gc.freeze()
