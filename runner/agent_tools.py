"""What an agent CLI's built-in tool call is at the gate: a tool of the `claude-code` bundle
(runner/bundles/claude-code.yaml) and the arguments an approver reads.

Three CLIs, three vocabularies, one set of gate tools. A tool not mapped here goes to the
gate under its own name, where the frozen-set stage denies it (fail closed).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GateCall:
    tool: str
    arguments: dict[str, Any]


def _keep(source: dict, *keys: str) -> dict[str, Any]:
    return {key: source[key] for key in keys if source.get(key) is not None}


def _edit(item: dict) -> dict[str, Any]:
    edit = {"old_string": item.get("old_string", ""), "new_string": item.get("new_string", "")}
    if item.get("replace_all") is not None:
        edit["replace_all"] = bool(item["replace_all"])
    return edit


def _brokered(name: str, tool_input: dict) -> GateCall:
    # `mcp__<server>__<tool>`: the server's tool as a run freezes it, `<server>.<tool>`.
    server, _, tool = name[len("mcp__") :].partition("__")
    return GateCall(f"{server}.{tool}" if tool else name, tool_input)


def claude_code_call(name: str, tool_input: dict, cwd: str) -> GateCall:
    if name == "Bash":
        return GateCall("run_command", {"command": tool_input.get("command", "")})
    if name == "Read":
        return GateCall("read_file", {"path": tool_input.get("file_path", "")})
    if name == "Write":
        return GateCall(
            "write_file",
            {"path": tool_input.get("file_path", ""), "content": tool_input.get("content", "")},
        )
    if name == "Edit":
        return GateCall(
            "write_file", {"path": tool_input.get("file_path", ""), "edits": [_edit(tool_input)]}
        )
    if name == "MultiEdit":
        edits = [_edit(item) for item in tool_input.get("edits") or [] if isinstance(item, dict)]
        return GateCall("write_file", {"path": tool_input.get("file_path", ""), "edits": edits})
    if name == "NotebookEdit":
        cell = _keep(tool_input, "cell_id", "new_source", "cell_type", "edit_mode")
        return GateCall("write_file", {"path": tool_input.get("notebook_path", ""), "cell": cell})
    if name == "LS":
        return GateCall("list_dir", {"path": tool_input.get("path") or cwd})
    if name == "Glob":
        return GateCall(
            "find_files",
            {"path": tool_input.get("path") or cwd, "pattern": tool_input.get("pattern", "")},
        )
    if name == "Grep":
        arguments = {
            "path": tool_input.get("path") or cwd,
            "pattern": tool_input.get("pattern", ""),
        }
        arguments.update(_keep(tool_input, "glob"))
        return GateCall("search_text", arguments)
    if name == "WebFetch":
        return GateCall("fetch_url", {"url": tool_input.get("url", "")})
    if name == "WebSearch":
        return GateCall("web_search", {"query": tool_input.get("query", "")})
    if name.startswith("mcp__"):
        return _brokered(name, tool_input)
    return GateCall(name, tool_input)


def codex_call(name: str, tool_input: dict, cwd: str) -> GateCall:
    if name in ("Bash", "shell", "shell_command", "exec_command", "local_shell"):
        command = tool_input.get("command", tool_input.get("cmd", ""))
        if isinstance(command, list):
            command = shlex.join(str(part) for part in command)
        return GateCall("run_command", {"command": str(command)})
    if name == "apply_patch":
        patch = tool_input.get("patch", tool_input.get("input", tool_input.get("command", "")))
        if isinstance(patch, list):
            patch = "\n".join(str(part) for part in patch)
        # A patch can touch several files; the path matched is the working directory and
        # the whole patch is what the approver reads.
        return GateCall("write_file", {"path": cwd, "content": str(patch)})
    if name.startswith("mcp__"):
        return _brokered(name, tool_input)
    return claude_code_call(name, tool_input, cwd)


def gemini_cli_call(name: str, tool_input: dict, cwd: str) -> GateCall:
    if name == "run_shell_command":
        return GateCall("run_command", {"command": tool_input.get("command", "")})
    if name == "read_file":
        return GateCall("read_file", {"path": tool_input.get("file_path", "")})
    if name == "write_file":
        return GateCall(
            "write_file",
            {"path": tool_input.get("file_path", ""), "content": tool_input.get("content", "")},
        )
    if name == "replace":
        return GateCall(
            "write_file",
            {
                "path": tool_input.get("file_path", ""),
                "edits": [
                    {
                        "old_string": tool_input.get("old_string", ""),
                        "new_string": tool_input.get("new_string", ""),
                    }
                ],
            },
        )
    if name == "list_directory":
        return GateCall("list_dir", {"path": tool_input.get("dir_path") or cwd})
    if name == "glob":
        return GateCall(
            "find_files",
            {"path": tool_input.get("dir_path") or cwd, "pattern": tool_input.get("pattern", "")},
        )
    if name == "grep_search":
        arguments = {
            "path": tool_input.get("dir_path") or cwd,
            "pattern": tool_input.get("pattern", ""),
        }
        if tool_input.get("include"):
            arguments["glob"] = tool_input["include"]
        return GateCall("search_text", arguments)
    if name == "web_fetch":
        return GateCall("fetch_url", {"url": tool_input.get("prompt", "")})
    if name == "google_web_search":
        return GateCall("web_search", {"query": tool_input.get("query", "")})
    if name.startswith("mcp_"):
        return GateCall(name, tool_input)
    return GateCall(name, tool_input)


DIALECTS = {"claude-code": claude_code_call, "codex": codex_call, "gemini-cli": gemini_cli_call}
