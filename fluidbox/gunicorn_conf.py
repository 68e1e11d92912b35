"""gunicorn settings: gthread workers, so a parked approval wait holds a thread (and no
database connection), not a whole worker process."""

import os

workers = int(os.environ.get("WEB_WORKERS", "2"))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "128"))
timeout = 60
graceful_timeout = 10
keepalive = 5
accesslog = os.environ.get("WEB_ACCESS_LOG") or None
