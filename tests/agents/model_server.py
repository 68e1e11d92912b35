"""A scripted Anthropic Messages API on 127.0.0.1 for the real Claude Code CLI.

Each turn it is given one `tool_use` to ask for; once the CLI sends that tool's result back,
it answers with text and ends the turn. Every request is kept for the test to read.
"""

from __future__ import annotations

import json
from typing import Any

from tests.agents.scripted_http import Reply, ScriptedHttpServer, event_stream, json_reply


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _message(blocks: list[bytes], stop_reason: str) -> bytes:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": "claude-scripted",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }
    end = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": 5},
    }
    return (
        _sse("message_start", start)
        + b"".join(blocks)
        + _sse("message_delta", end)
        + _sse("message_stop", {"type": "message_stop"})
    )


def tool_use_stream(tool_id: str, name: str, tool_input: dict) -> bytes:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
    delta = {"type": "input_json_delta", "partial_json": json.dumps(tool_input)}
    return _message(
        [
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            ),
            _sse(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            ),
            _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ],
        "tool_use",
    )


def text_stream(text: str) -> bytes:
    block = {"type": "text", "text": ""}
    delta = {"type": "text_delta", "text": text}
    return _message(
        [
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            ),
            _sse(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            ),
            _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ],
        "end_turn",
    )


def tool_results(body: dict) -> list[dict]:
    results = []
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            results += [block for block in content if block.get("type") == "tool_result"]
    return results


class ScriptedModel(ScriptedHttpServer):
    def __init__(self) -> None:
        super().__init__()
        self.tool_use: tuple[str, str, dict] | None = None

    def answer(self, method: str, path: str, body: Any) -> Reply:
        if method != "POST":
            return json_reply({"type": "error"}, status=404)
        if not path.startswith("/v1/messages") or "count_tokens" in path:
            return json_reply({"input_tokens": 10})
        if not body.get("stream"):
            return json_reply(
                {
                    "id": "msg_plain",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-scripted",
                    "content": [{"type": "text", "text": "ok"}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                }
            )
        return event_stream(self._next(body))

    def _next(self, body: dict) -> bytes:
        tool_id = self.tool_use[0] if self.tool_use else None
        answered = any(r.get("tool_use_id") == tool_id for r in tool_results(body))
        offered = {tool.get("name") for tool in body.get("tools") or []}
        if self.tool_use is None or answered or self.tool_use[1] not in offered:
            return text_stream("done")
        return tool_use_stream(*self.tool_use)

    def result_for(self, tool_id: str) -> dict | None:
        for body in reversed(self.bodies("/v1/messages")):
            for result in tool_results(body):
                if result.get("tool_use_id") == tool_id:
                    return result
        return None

    def offered_tools(self) -> set[str]:
        names: set[str] = set()
        for body in self.bodies("/v1/messages"):
            names |= {tool.get("name") for tool in body.get("tools") or []}
        return names
