"""The test web server's own start-up: a port taken before gunicorn binds it (the kernel
handed the port out as free, and another connection took it first)."""

import socket

import httpx
import pytest

from tests.support.ports import free_port
from tests.support.servers import WebServer

pytestmark = pytest.mark.slow


def test_a_first_start_moves_off_a_port_taken_before_the_bind(transactional_db, tmp_path):
    server = WebServer(tmp_path, workers=1, threads=4)
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0)
        taken = free_port()
        holder.bind(("127.0.0.1", taken))
        holder.listen()
        server._listen_on(taken)
        server.start()
        try:
            assert server.port != taken
            assert server.env["FLUIDBOX_PUBLIC_URL"] == server.url
            assert httpx.get(f"{server.url}/favicon.ico", timeout=30).status_code < 500
        finally:
            server.stop()


def test_a_restart_keeps_its_port(transactional_db, tmp_path):
    server = WebServer(tmp_path, workers=1, threads=4)
    server.start()
    port = server.port
    server.stop()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        with pytest.raises(RuntimeError, match="could not bind|exited"):
            server.start()
    assert server.port == port
