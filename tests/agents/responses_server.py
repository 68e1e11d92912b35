"""A scripted OpenAI Responses API on 127.0.0.1 for the real Codex CLI.

Each turn it is given one `function_call` to ask for; once the CLI sends that call's output
back (a `function_call_output` under the same `call_id`), it answers with text and ends the
turn. Every request (method, path, body) is kept for the test to read.
"""

from __future__ import annotations

import json
from typing import Any

from tests.agents.scripted_http import Reply, ScriptedHttpServer, event_stream, json_reply


def _sse(data: dict) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


_USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 15,
}


def _response(number: int, item: dict) -> bytes:
    response_id = f"resp_scripted_{number}"
    return (
        _sse(
            {
                "type": "response.created",
                "response": {"id": response_id, "object": "response", "status": "in_progress"},
            }
        )
        + _sse({"type": "response.output_item.added", "output_index": 0, "item": item})
        + _sse({"type": "response.output_item.done", "output_index": 0, "item": item})
        + _sse(
            {
                "type": "response.completed",
                "response": {
                    "id": response_id,
                    "object": "response",
                    "status": "completed",
                    "output": [item],
                    "usage": _USAGE,
                },
            }
        )
    )


def function_call_stream(
    number: int, call_id: str, name: str, arguments: dict, namespace: str | None = None
) -> bytes:
    item = {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name[len(namespace) + 2 :] if namespace else name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }
    if namespace:
        item["namespace"] = namespace
    return _response(number, item)


def text_stream(number: int, text: str) -> bytes:
    item = {
        "type": "message",
        "id": f"msg_scripted_{number}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return _response(number, item)


def call_outputs(body: dict) -> list[dict]:
    items = body.get("input") if isinstance(body.get("input"), list) else []
    return [
        item
        for item in items
        if isinstance(item, dict) and str(item.get("type", "")).endswith("call_output")
    ]


def namespaces(body: dict) -> dict[str, str]:
    """Each namespaced tool's full name (`mcp__fluidbox__tracker__list_issues`) → its
    namespace (`mcp__fluidbox`): Codex offers an MCP server's tools as one namespace."""
    found: dict[str, str] = {}
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                found[f"{tool.get('name')}__{inner.get('name')}"] = str(tool.get("name"))
    return found


def tool_names(body: dict) -> set[str]:
    names = set(namespaces(body))
    for tool in body.get("tools") or []:
        names.add(str(tool.get("name") or tool.get("type")))
    return names


class ScriptedResponses(ScriptedHttpServer):
    def __init__(self) -> None:
        super().__init__()
        self.call: tuple[str, str, dict] | None = None

    def answer(self, method: str, path: str, body: Any) -> Reply:
        if method != "POST":
            return json_reply({"object": "list", "data": [], "models": []})
        if not path.rstrip("/").endswith("/responses"):
            return json_reply({})
        return event_stream(self._next(body))

    def _next(self, body: dict) -> bytes:
        with self._lock:
            number = len(self.requests)
        call_id = self.call[0] if self.call else None
        answered = any(item.get("call_id") == call_id for item in call_outputs(body))
        if self.call is None or answered or self.call[1] not in tool_names(body):
            return text_stream(number, "done")
        return function_call_stream(number, *self.call, namespaces(body).get(self.call[1]))

    def output_for(self, call_id: str) -> dict | None:
        for body in reversed(self.bodies("/responses")):
            for item in call_outputs(body):
                if item.get("call_id") == call_id:
                    return item
        return None

    def offered_tools(self) -> set[str]:
        names: set[str] = set()
        for body in self.bodies("/responses"):
            names |= tool_names(body)
        return names
