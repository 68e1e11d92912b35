"""Wiring the gate into agent loops: a plain-Python toolbox, and claude-agent-sdk permissions.

The SDK adapter never imports `claude_agent_sdk` at module import: it builds the SDK's own
result types when the SDK is installed, and plain dicts of the same shape otherwise.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import uuid
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from runner.agent_tools import claude_code_call
from runner.cli_paths import real_path
from runner.client import GateClient
from runner.decisions import GateDecision
from runner.errors import GateAuthError, GateError
from runner.tools import ToolResult, ToolRunner

# Modes in which the SDK would approve calls without asking anyone: never used.
REFUSED_PERMISSION_MODES = frozenset({"bypassPermissions"})
_REFUSED_CLI_FLAGS = frozenset(
    {"dangerously-skip-permissions", "allow-dangerously-skip-permissions", "permission-mode"}
)

SdkTranslation = Callable[[str, Mapping[str, Any]], tuple[str, dict[str, Any]]]


class BypassRefused(ValueError):
    """A configuration that would let tool calls skip the gate."""


class GatedToolbox:
    """The sandbox tools for any agent loop: `call(name, arguments)` asks the gate, then runs."""

    def __init__(self, runner: ToolRunner, *, session_id: str | None = None) -> None:
        self.runner = runner
        self.session_id = session_id or f"session-{uuid.uuid4().hex}"

    def definitions(self) -> list[dict[str, Any]]:
        """The tools to declare to a model API."""
        return [tool.definition() for tool in self.runner.tools.values()]

    def call(
        self, name: str, arguments: Mapping[str, Any], *, tool_call_id: str | None = None
    ) -> ToolResult:
        """Run one call; pass the model's own tool-call id so a retry re-attaches to it."""
        call_id = tool_call_id or f"call-{uuid.uuid4().hex}"
        return self.runner.run_tool(self.session_id, call_id, name, arguments)


def translate_sdk_call(tool_name: str, tool_input: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """Claude Code's built-in tool names and inputs, as the gate's sandbox tools.

    Anything else goes to the gate under its own name, so a tool outside the run's frozen set is
    denied there (source `capability`): fail closed. An MCP tool keeps its SDK name
    (`mcp__jira__search`), never the connection's brokered tool (`jira.search`): that one is
    called through the broker (`Runner`'s brokered tools), with the sealed credential.
    """
    if tool_name == "Bash":
        return "run_command", {"command": tool_input.get("command")}
    if tool_name == "Read":
        return "read_file", {"path": _real_path(tool_input.get("file_path"))}
    if tool_name == "Write":
        return "write_file", {
            "path": _real_path(tool_input.get("file_path")),
            "content": tool_input.get("content"),
        }
    return tool_name, dict(tool_input)


def _real_path(path: Any) -> Any:
    # The CLI's Read and Write follow symbolic links: the gate is asked about the place a
    # link leads to (`notes.md -> .git/hooks/pre-commit`), as the CLI hooks do.
    # `UnresolvablePath` (a loop, say) denies the call.
    return real_path(path, os.getcwd()) if isinstance(path, str) and path else path


class GatePermission:
    """The gate as claude-agent-sdk's permission layer, in every permission mode.

    Use both entry points (`claude_agent_options` does): `pre_tool_use` is a PreToolUse hook,
    which the SDK runs before any permission mode or allow rule can approve a call (so
    `acceptEdits`, `dontAsk`, `auto` and `allowed_tools` still reach the gate), and
    `can_use_tool` is the callback for what reaches the permission prompt. Both ask with the
    SDK's `tool_use_id` as the tool call id, so the second ask re-attaches to the first.
    """

    def __init__(
        self,
        client: GateClient,
        *,
        session_id: str | None = None,
        translate: SdkTranslation = translate_sdk_call,
        wait_seconds: int = 25,
        total_wait: float | None = None,
        project_dir: str | None = None,
    ) -> None:
        self.client = client
        self.session_id = session_id or f"session-{uuid.uuid4().hex}"
        self.translate = translate
        self.wait_seconds = wait_seconds
        self.total_wait = total_wait
        # Where Claude Code runs (the SDK's `cwd`): a Bash call elsewhere is asked with a
        # `cd` to where it runs in front, as the CLI hooks ask it.
        self.project_dir = project_dir or os.getcwd()
        self._cwd_of: dict[str, str] = {}  # tool_use_id -> the folder PreToolUse named
        self._last_cwd: str | None = None

    async def can_use_tool(self, tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        """`CanUseTool`: `PermissionResultAllow`/`PermissionResultDeny` (dicts without the SDK)."""
        tool_use_id = _field(context, "tool_use_id")
        verdict, message, stop = await self._ask(tool_name, tool_input, tool_use_id)
        sdk = _sdk()
        if verdict == "allow":
            return sdk.PermissionResultAllow() if sdk else {"behavior": "allow"}
        if sdk:
            return sdk.PermissionResultDeny(message=message, interrupt=stop)
        return {"behavior": "deny", "message": message, "interrupt": stop}

    async def pre_tool_use(
        self, hook_input: Mapping[str, Any], tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        """`HookCallback` for PreToolUse: the gate's verdict as `permissionDecision`."""
        tool_use_id = tool_use_id or hook_input.get("tool_use_id")
        cwd = hook_input.get("cwd")
        if isinstance(cwd, str) and cwd:
            self._last_cwd = cwd
            if tool_use_id:
                self._cwd_of[tool_use_id] = cwd
        verdict, message, stop = await self._ask(
            str(hook_input.get("tool_name", "")), hook_input.get("tool_input") or {}, tool_use_id
        )
        output: dict[str, Any] = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": verdict,
                "permissionDecisionReason": message,
            }
        }
        if stop:
            output["continue_"] = False
            output["stopReason"] = message
        return output

    async def _ask(
        self, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str | None
    ) -> tuple[str, str, bool]:
        try:
            gate_tool, arguments = self.translate(tool_name, tool_input)
            if gate_tool == "run_command" and isinstance(arguments.get("command"), str):
                arguments = self._where_it_runs(arguments["command"], tool_use_id)
        except ValueError as error:
            return "deny", f"The call was not run: {error}", False
        call_id = tool_use_id or f"call-{uuid.uuid4().hex}"
        try:
            decision: GateDecision = await asyncio.to_thread(
                self.client.ask,
                self.session_id,
                call_id,
                gate_tool,
                arguments,
                wait_seconds=self.wait_seconds,
                total_wait=self.total_wait,
            )
        except GateAuthError as error:
            return "deny", f"The run is over: {error}", True
        except (GateError, ValueError) as error:
            return (
                "deny",
                f"The permission gate could not decide; the call was not run: {error}",
                False,
            )
        except Exception as error:  # noqa: BLE001 — an exception out of a hook is no verdict
            return (
                "deny",
                "The permission gate could not decide; the call was not run: "
                f"{type(error).__name__}",
                False,
            )
        if decision.allowed:
            return "allow", decision.reason or "allowed by the fluidbox gate", False
        return "deny", decision.as_tool_error(), False

    def _where_it_runs(self, command: str, tool_use_id: str | None) -> dict[str, Any]:
        """`run_command`'s arguments for a Bash call as the CLI hook asks them: with a `cd` in
        front when Claude Code runs it outside the project's folder (it keeps a `cd` from one
        call to the next; `git status` in a folder laid out as a repository runs that
        folder's configuration), and the links on disk its words lead through. The folder is
        the one PreToolUse named for this call, or else the last one it named (the SDK's
        `can_use_tool` names none)."""
        cwd = (self._cwd_of.get(tool_use_id) if tool_use_id else None) or self._last_cwd
        [call] = claude_code_call("Bash", {"command": command}, cwd or self.project_dir,
                                  self.project_dir)  # fmt: skip
        return call.arguments


def claude_agent_options(
    permission: GatePermission,
    *,
    permission_mode: str = "default",
    hook_timeout: float = 3600.0,
    **options: Any,
) -> Any:
    """`ClaudeAgentOptions` (or, without the SDK, a dict of its keyword arguments) that route
    every tool call through the gate. Refuses `bypassPermissions` and any other way around it.
    """
    if permission_mode in REFUSED_PERMISSION_MODES:
        raise BypassRefused(f"permission_mode={permission_mode!r} would skip the fluidbox gate")
    for owned in ("can_use_tool", "permission_prompt_tool_name"):
        if owned in options:
            raise BypassRefused(f"{owned} is the gate's; it cannot be replaced")
    flags = {str(flag).lstrip("-") for flag in (options.get("extra_args") or {})}
    if flags & _REFUSED_CLI_FLAGS:
        raise BypassRefused(f"CLI flags {sorted(flags & _REFUSED_CLI_FLAGS)} would skip the gate")
    sdk = _sdk()
    # The gate's matcher goes first, with no tool-name filter: it sees every tool.
    gate_matcher: Any = (
        sdk.HookMatcher(matcher=None, hooks=[permission.pre_tool_use], timeout=hook_timeout)
        if sdk
        else {"matcher": None, "hooks": [permission.pre_tool_use], "timeout": hook_timeout}
    )
    hooks = dict(options.pop("hooks", None) or {})
    hooks["PreToolUse"] = [gate_matcher, *hooks.get("PreToolUse", [])]
    arguments = {
        **options,
        "permission_mode": permission_mode,
        "can_use_tool": permission.can_use_tool,
        "hooks": hooks,
    }
    return sdk.ClaudeAgentOptions(**arguments) if sdk else arguments


def _sdk() -> ModuleType | None:
    try:
        return importlib.import_module("claude_agent_sdk")
    except ImportError:
        return None


def _field(context: Any, name: str) -> Any:
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)
