"""A scripted Gemini API (generativelanguage v1beta) on 127.0.0.1 for the real Gemini CLI.

Each turn it is given one `functionCall` to ask for; once the CLI sends that call's
`functionResponse` back, it answers with text and ends the turn. Every request (method, path,
body) is kept for the test to read, and for a person to read when a run goes wrong.

The CLI streams (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, answered with
server-sent events `data: <GenerateContentResponse>`); anything else it may ask on the side
(`:generateContent`, `:countTokens`, a model listing) gets a small plausible answer.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def _response(parts: list[dict]) -> dict:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": USAGE,
        "modelVersion": "gemini-scripted",
    }


def function_call(call_id: str, name: str, args: dict) -> dict:
    return _response([{"functionCall": {"id": call_id, "name": name, "args": args}}])


def text(words: str) -> dict:
    return _response([{"text": words}])


def function_responses(body: dict) -> list[dict]:
    responses = []
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                responses.append(part["functionResponse"])
    return responses


def offered(body: dict) -> set[str]:
    names: set[str] = set()
    for tool in body.get("tools") or []:
        for declaration in tool.get("functionDeclarations") or []:
            names.add(declaration.get("name"))
    return names


class ScriptedGemini:
    def __init__(self) -> None:
        self.call: tuple[str, str, dict] | None = None
        self.requests: list[tuple[str, str, dict]] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _record(self, body: dict) -> None:
                with model._lock:
                    model.requests.append((self.command, self.path, body))

            def do_GET(self) -> None:
                self._record({})
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    self._json({"models": []})
                    return
                self._json({"error": {"code": 404, "message": "no such thing"}}, status=404)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"{}")
                self._record(body)
                path = self.path.split("?")[0]
                if path.endswith(":countTokens"):
                    self._json({"totalTokens": 10})
                elif path.endswith(":streamGenerateContent"):
                    self._stream(model._next(body))
                elif path.endswith(":generateContent"):
                    self._json(model._side_answer(body))
                else:
                    self._json({"error": {"code": 404, "message": "no such thing"}}, status=404)

            def _json(self, data: dict, status: int = 200) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, chunk: dict) -> None:
                payload = f"data: {json.dumps(chunk)}\r\n\r\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _next(self, body: dict) -> dict:
        if self.call is None:
            return text("done")
        call_id, name, args = self.call
        answered = any(
            r.get("name") == name and str(r.get("id", "")).endswith(call_id)
            for r in function_responses(body)
        )
        if answered or name not in offered(body):
            return text("done")
        return function_call(call_id, name, args)

    def _side_answer(self, body: dict) -> dict:
        # A side question (routing, whether the model is done): answer as JSON when JSON is
        # asked for, so no parser trips; the next speaker is the user.
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":
            return text(json.dumps({"next_speaker": "user", "reasoning": "done"}))
        return text("done")

    def result_for(self, call_id: str) -> dict | None:
        """The `response` of the `functionResponse` the CLI sent for this call."""
        for _, _, body in reversed(self.requests):
            for response in function_responses(body):
                if str(response.get("id", "")).endswith(call_id):
                    return response.get("response") or {}
        return None

    def offered_tools(self) -> set[str]:
        names: set[str] = set()
        for _, _, body in self.requests:
            names |= offered(body)
        return names

    def __enter__(self) -> ScriptedGemini:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
