"""What the scripted model servers share: an HTTP server on 127.0.0.1, in a thread of its
own, that keeps every request (method, path, JSON body) and hands each to the model's
`answer`. Each model (`model_server`, `responses_server`, `gemini_server`) says only what
its API answers."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    payload: bytes
    content_type: str = "application/json"
    status: int = 200


def json_reply(data: Any, status: int = 200) -> Reply:
    return Reply(json.dumps(data).encode(), status=status)


def event_stream(payload: bytes) -> Reply:
    return Reply(payload, content_type="text/event-stream")


class ScriptedHttpServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self._answer(None)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw[:2000].decode(errors="replace")}
                self._answer(body)

            def _answer(self, body: Any) -> None:
                with scripted._lock:
                    scripted.requests.append(
                        {"method": self.command, "path": self.path, "body": body}
                    )
                reply = scripted.answer(self.command, self.path, body)
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(reply.payload)))
                self.end_headers()
                self.wfile.write(reply.payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, method: str, path: str, body: Any) -> Reply:
        raise NotImplementedError

    def bodies(self, path_ends: str) -> list[dict]:
        """The JSON bodies POSTed to a path ending so (the query string aside), in order."""
        with self._lock:
            requests = list(self.requests)
        return [
            r["body"]
            for r in requests
            if r["method"] == "POST" and r["path"].split("?")[0].rstrip("/").endswith(path_ends)
        ]

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


# A session's script: the tool calls the model asks for, in order (id, tool, input), and
# between them functions the harness runs (what a call the policy allowed would write).
Step = tuple[str, str, dict] | Callable[[], None]


def next_step(steps: list[Step], done: set[int], answered: Callable[[str], bool]) -> tuple | None:
    """The first call of the script not answered yet, running each harness step before it
    once (in the model server's thread, between two calls of one session)."""
    for index, step in enumerate(steps):
        if callable(step):
            if index not in done:
                done.add(index)
                step()
            continue
        if not answered(step[0]):
            return step
    return None
