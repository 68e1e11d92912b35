"""The production server opens no control interface besides HTTP. gunicorn (25 and later)
starts a control socket in its master by default, through which any process of the same
user can add, remove or restart workers or shut the gate down; fluidbox has no use for it."""

import pytest

from tests.support.servers import WebServer

pytestmark = pytest.mark.slow


def test_gunicorn_opens_no_control_socket(transactional_db, tmp_path):
    runtime = tmp_path / "runtime"  # where gunicorn puts its control socket by default
    runtime.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    with WebServer(
        tmp_path, workers=1, threads=4, XDG_RUNTIME_DIR=str(runtime), HOME=str(home)
    ) as server:
        # The master starts its control socket right after forking the workers, so once a
        # worker answers (Django loaded) it would be there.
        assert server.log()  # the server has written its start-up lines
        left = sorted(str(path) for path in [*runtime.rglob("*"), *home.rglob("*.ctl")])
        assert left == []
        assert "Control socket" not in server.log()
