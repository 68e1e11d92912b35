"""The FLUIDBOX_METRICS_BIND listener is told apart by the socket a connection was accepted
on, never by what the client sends: with the main address on a Unix socket (where gunicorn
fills SERVER_NAME and SERVER_PORT from the Host header), a Host naming the listener still
gets a 401 there."""

import tempfile
from pathlib import Path

import httpx
import pytest

from tests.support.servers import ServerProcess, child_environment, free_port, gunicorn_args
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow


class UnixSocketServer(ServerProcess):
    """gunicorn (gthread, the project's config) on a Unix socket, plus the metrics listener
    the config adds from FLUIDBOX_METRICS_BIND."""

    def __init__(self, directory: Path, listener: str, **env: str) -> None:
        self.socket_path = directory / "fb.sock"
        args = gunicorn_args(f"unix:{self.socket_path}", workers=1, threads=4)
        environment = child_environment(FLUIDBOX_METRICS_BIND=listener, **env)
        environment.pop("FLUIDBOX_METRICS_TOKEN", None)
        super().__init__(args, environment, directory / "gunicorn.log")

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.HTTPTransport(uds=str(self.socket_path)), timeout=30)


def test_a_host_header_over_the_unix_socket_does_not_unlock_metrics(transactional_db):
    listener = f"127.0.0.1:{free_port()}"
    # A short directory: a Unix socket's path is limited to about 100 bytes.
    with tempfile.TemporaryDirectory(prefix="fb-") as directory:
        server = UnixSocketServer(Path(directory), listener)
        with server:

            def answering() -> bool:
                assert server.process.poll() is None, server.log()[-3000:]
                try:
                    with server.client() as client:
                        client.get("http://x/favicon.ico")
                    return True
                except httpx.HTTPError:
                    return False

            wait_until(answering, "gunicorn to answer on its Unix socket")
            with server.client() as client:
                spoofed = client.get("http://x/metrics", headers={"Host": listener})
                assert spoofed.status_code == 401, spoofed.text[:500]
                assert "fluidbox_" not in spoofed.text
                main = client.get("http://x/metrics", headers={"Host": "127.0.0.1:8102"})
                assert main.status_code == 401
                # Nor does the Host make the Unix socket the metrics-only listener.
                schema = client.get("http://x/v1/schema", headers={"Host": listener})
                assert "serves /metrics only" not in schema.text
            # The listener itself, by its socket, serves /metrics and nothing else.
            served = httpx.get(f"http://{listener}/metrics", timeout=30)
            assert served.status_code == 200
            assert "fluidbox_approvals_pending" in served.text
            elsewhere = httpx.get(f"http://{listener}/v1/schema", timeout=30)
            assert elsewhere.status_code == 404
            assert "serves /metrics only" in elsewhere.text
            # Whatever Host it is sent: the socket decides, not the header.
            renamed = httpx.get(
                f"http://{listener}/metrics", headers={"Host": "127.0.0.1:8102"}, timeout=30
            )
            assert renamed.status_code == 200
