"""gunicorn settings: gthread workers, so a parked approval wait holds a thread (and no
database connection), not a whole worker process."""

import gc
import os

workers = int(os.environ.get("WEB_WORKERS", "2"))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "128"))
timeout = 60
graceful_timeout = 10
keepalive = 5
accesslog = os.environ.get("WEB_ACCESS_LOG") or None


def post_worker_init(worker):
    # By now the worker has imported Django, every app and the URL patterns: objects that
    # live as long as the process. Freezing them keeps each full garbage collection from
    # walking them again; measured under bench/gate_load.py, full collections went from
    # 70–370 ms (every thread stalled, the p99 at half load with them) to mostly under
    # 35 ms (the odd one longer when the CPUs are saturated).
    gc.freeze()
