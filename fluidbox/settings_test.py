"""Test settings: the production settings with development defaults and a fixed machine key."""

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("FLUIDBOX_DEVELOPMENT", "1")
os.environ.setdefault("FLUIDBOX_MACHINE_KEY", "3Qm3dYpHzOeWb0mCwJ5vQ4kVxFf5m0Zc1s9iB7Ytq2U=")
# Each pytest-xdist worker (`make test` runs two) keeps its files apart; the servers a
# test starts inherit the worker's directory.
_data_dir = os.environ.get("FLUIDBOX_DATA_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "var", "test"
)
_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker and os.path.basename(os.path.normpath(_data_dir)) != _worker:
    _data_dir = os.path.join(_data_dir, _worker)
os.environ["FLUIDBOX_DATA_DIR"] = _data_dir
os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
# The tests' own MCP servers listen on 127.0.0.1: allowed explicitly, as a deployment would
# allow an internal server. The SSRF tests clear it (tests/security/test_connection_egress.py).
os.environ.setdefault("FLUIDBOX_CONNECTION_ALLOWED_HOSTS", "127.0.0.1")

if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
    # Each test session counts on its own; servers a test starts inherit the directory
    # unless the test gives them theirs.
    _metrics_dir = tempfile.mkdtemp(prefix="fluidbox-test-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _metrics_dir
    _owner = os.getpid()
    atexit.register(lambda: os.getpid() == _owner and shutil.rmtree(_metrics_dir, True))

from fluidbox.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405
