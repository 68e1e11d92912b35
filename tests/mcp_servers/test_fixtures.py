"""The test servers' own start-up: a port taken before the server binds it."""

import socket
import threading

from tests.mcp_servers.fixtures import ConfigurableMcpServer
from tests.support.ports import free_port


def _held_port() -> socket.socket:
    """A port bound (not listening) by this process, as an outgoing connection holds one."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", free_port()))
    return holder


def test_a_first_start_moves_off_a_port_taken_before_the_bind(tmp_path):
    server = ConfigurableMcpServer(tmp_path, [])
    with _held_port() as holder:
        taken = holder.getsockname()[1]
        server._process.port = taken
        server.start()
        try:
            assert server.port != taken
            assert server.requests() == []
            with socket.create_connection(("127.0.0.1", server.port), timeout=10):
                pass
        finally:
            server.stop()


def test_a_restart_keeps_its_port_and_waits_for_a_holder_to_let_go(tmp_path):
    server = ConfigurableMcpServer(tmp_path, [])
    server.start()
    port = server.port
    server.stop()
    server.start()
    assert server.port == port
    server.stop()
    holder = socket.socket()
    holder.bind(("127.0.0.1", port))
    threading.Timer(1.0, holder.close).start()
    server.start()
    try:
        assert server.port == port
        assert holder.fileno() == -1, "the server started while the port was still held"
        with socket.create_connection(("127.0.0.1", port), timeout=10):
            pass
    finally:
        server.stop()


def test_a_restart_says_when_its_port_stays_taken(tmp_path):
    server = ConfigurableMcpServer(tmp_path, [])
    server.start()
    port = server.port
    server.stop()
    server._process.restart_patience = 1.0
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        try:
            server.start()
        except RuntimeError as refused:
            assert f"port {port} was taken" in str(refused)
        else:
            server.stop()
            raise AssertionError("the restart bound a port another socket held")
    assert server.port == port
