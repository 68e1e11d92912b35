"""Test settings: the production settings with development defaults and a fixed machine key."""

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("FLUIDBOX_DEVELOPMENT", "1")
os.environ.setdefault("FLUIDBOX_MACHINE_KEY", "3Qm3dYpHzOeWb0mCwJ5vQ4kVxFf5m0Zc1s9iB7Ytq2U=")
# Each pytest-xdist worker (`make test` runs two) keeps its files apart; the servers a
# test starts inherit the worker's directory, or the one the test gives them.
os.environ.setdefault(
    "FLUIDBOX_DATA_DIR",
    os.path.join(
        os.path.dirname(__file__), "..", "var", "test", os.environ.get("PYTEST_XDIST_WORKER", "")
    ),
)
os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
# The tests' own MCP servers listen on 127.0.0.1: allowed explicitly, as a deployment would
# allow an internal server. The SSRF tests clear it (tests/security/test_connection_egress.py).
os.environ.setdefault("FLUIDBOX_CONNECTION_ALLOWED_HOSTS", "127.0.0.1")

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if (
    "PROMETHEUS_MULTIPROC_DIR" not in os.environ
    or os.environ.get("FLUIDBOX_TEST_METRICS_WORKER", _worker) != _worker
):
    # Each test session counts on its own, and each xdist worker (which inherits the
    # controller's directory otherwise: one worker's count would move under another's
    # test); servers a test starts inherit the directory unless the test gives them theirs.
    _metrics_dir = tempfile.mkdtemp(prefix="fluidbox-test-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _metrics_dir
    os.environ["FLUIDBOX_TEST_METRICS_WORKER"] = _worker
    _owner = os.getpid()
    atexit.register(lambda: os.getpid() == _owner and shutil.rmtree(_metrics_dir, True))

from fluidbox.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405
