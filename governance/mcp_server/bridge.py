"""Serving the SDK's ASGI app from the WSGI process (gunicorn gthread) through a2wsgi.

One event loop per web process, started at its first MCP request (after gunicorn forked),
runs the SDK's session managers (one answering with an event stream, one with JSON). A
request thread hands its request to that loop and streams the answer back as the loop
produces it, so SSE progress notifications reach the client while a call waits. The loop
only shuffles bytes and awaits; database work runs in worker threads (`server.py`).
"""

import asyncio
import concurrent.futures
import itertools
import threading
from collections.abc import Iterable, Iterator

import anyio
from a2wsgi import ASGIMiddleware

from governance.mcp_server.server import asgi_app, build_session_manager

# Hop-by-hop headers are the WSGI server's business, not the application's (PEP 3333).
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "upgrade"})
_START_TIMEOUT = 30


class McpBridge:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._app: ASGIMiddleware | None = None

    def _start(self) -> ASGIMiddleware:
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="fluidbox-mcp-loop", daemon=True).start()
        streaming = build_session_manager(json_response=False)
        plain = build_session_manager(json_response=True)
        started: concurrent.futures.Future = concurrent.futures.Future()

        async def hold_managers_open() -> None:
            async with streaming.run(), plain.run():
                started.set_result(None)
                await anyio.sleep_forever()

        asyncio.run_coroutine_threadsafe(hold_managers_open(), loop)
        started.result(timeout=_START_TIMEOUT)
        return ASGIMiddleware(asgi_app(streaming, plain), loop=loop)

    def app(self) -> ASGIMiddleware:
        with self._lock:
            if self._app is None:
                self._app = self._start()
            return self._app

    def respond(self, environ: dict) -> tuple[int, list[tuple[str, str]], Iterable[bytes]]:
        """Run one request: (status, headers, body chunks as they come)."""
        started: dict = {}

        def start_response(status: str, headers, exc_info=None) -> None:
            started["status"] = int(status.split(" ", 1)[0])
            started["headers"] = [(k, v) for k, v in headers if k.lower() not in _HOP_BY_HOP]

        chunks: Iterator[bytes] = iter(self.app()(environ, start_response))
        first = next(chunks, b"")  # the app has answered its status line by its first chunk
        return started["status"], started["headers"], itertools.chain([first], chunks)


bridge = McpBridge()
