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
from typing import Any

from tests.agents.scripted_http import Reply, ScriptedHttpServer, event_stream, json_reply

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


class ScriptedGemini(ScriptedHttpServer):
    def __init__(self) -> None:
        super().__init__()
        self.call: tuple[str, str, dict] | None = None

    def answer(self, method: str, path: str, body: Any) -> Reply:
        path = path.split("?")[0]
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return json_reply({"models": []})
        if method == "POST" and path.endswith(":countTokens"):
            return json_reply({"totalTokens": 10})
        if method == "POST" and path.endswith(":streamGenerateContent"):
            return event_stream(f"data: {json.dumps(self._next(body))}\r\n\r\n".encode())
        if method == "POST" and path.endswith(":generateContent"):
            return json_reply(self._side_answer(body))
        return json_reply({"error": {"code": 404, "message": "no such thing"}}, status=404)

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
        for body in reversed(self.bodies(":streamGenerateContent")):
            for response in function_responses(body):
                if str(response.get("id", "")).endswith(call_id):
                    return response.get("response") or {}
        return None

    def offered_tools(self) -> set[str]:
        names: set[str] = set()
        for body in self.bodies(":streamGenerateContent"):
            names |= offered(body)
        return names
