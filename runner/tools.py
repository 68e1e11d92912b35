"""The sandbox tools, and the runner that asks the gate before running any of them.

The specs here are the `sandbox-basic` capability bundle (`runner/bundles/sandbox-basic.yaml`
is the same bundle in the SPEC §8 YAML form, for `manage.py bundle import`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from runner.client import GateClient
from runner.command_line import CommandRefused
from runner.confinement import Workspace, WorkspaceEscape
from runner.decisions import GateDecision
from runner.errors import GateAuthError, GateError
from runner.executor import Executor
from runner.masking import SecretMasker

Handler = Literal["read_file", "write_file", "list_dir", "run_command"]


@dataclass(frozen=True)
class MatchArgument:
    """Which argument the policy matches on, and how it is normalised (`shell`, `path`, `text`)."""

    name: str
    kind: Literal["shell", "path", "text"]


@dataclass(frozen=True)
class ToolSpec:
    """One sandbox tool: its bundle entry, and which local implementation runs it."""

    name: str
    description: str
    access: Literal["read", "write"]
    match_argument: MatchArgument | None
    schema: dict[str, Any]
    handler: Handler
    secrets: bool = False

    @classmethod
    def from_bundle_entry(cls, entry: Mapping[str, Any], *, handler: Handler) -> ToolSpec:
        """A tool from a bundle entry (YAML, or the `tools` a run froze), run by `handler`."""
        match = entry.get("match_argument")
        return cls(
            name=entry["name"],
            description=entry.get("description", ""),
            access=entry["access"],
            match_argument=MatchArgument(match["name"], match["kind"]) if match else None,
            schema=dict(entry["schema"]),
            handler=handler,
            secrets=bool(entry.get("secrets", False)),
        )

    def bundle_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "description": self.description}
        entry["access"] = self.access
        if self.match_argument:
            entry["match_argument"] = {
                "name": self.match_argument.name,
                "kind": self.match_argument.kind,
            }
        entry["secrets"] = self.secrets
        entry["schema"] = self.schema
        return entry

    def definition(self) -> dict[str, Any]:
        """The tool as a model API declares it (name, description, JSON schema)."""
        return {"name": self.name, "description": self.description, "input_schema": self.schema}


def _object_schema(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            name: {"type": "string", "description": text} for name, text in properties.items()
        },
        "required": list(properties),
        "additionalProperties": False,
    }


READ_FILE = ToolSpec(
    name="read_file",
    description="Read a text file inside the workspace.",
    access="read",
    match_argument=MatchArgument("path", "path"),
    schema=_object_schema(path="Path of the file, relative to the workspace or under it"),
    handler="read_file",
)
WRITE_FILE = ToolSpec(
    name="write_file",
    description="Create or replace a text file inside the workspace.",
    access="write",
    match_argument=MatchArgument("path", "path"),
    schema=_object_schema(
        path="Path of the file, relative to the workspace or under it",
        content="The complete new content of the file",
    ),
    handler="write_file",
)
LIST_DIR = ToolSpec(
    name="list_dir",
    description="List the entries of a directory inside the workspace.",
    access="read",
    match_argument=MatchArgument("path", "path"),
    schema=_object_schema(path="Path of the directory; '.' is the workspace itself"),
    handler="list_dir",
)
RUN_COMMAND = ToolSpec(
    name="run_command",
    description=(
        "Run one program (no shell: no pipes, redirections, `;` or `&&`) in the workspace."
    ),
    access="write",
    match_argument=MatchArgument("command", "shell"),
    schema=_object_schema(command="The command line, e.g. `git status`"),
    handler="run_command",
)
SANDBOX_BASIC: tuple[ToolSpec, ...] = (READ_FILE, WRITE_FILE, LIST_DIR, RUN_COMMAND)


def bundle_document(name: str, tools: Iterable[ToolSpec]) -> dict[str, Any]:
    """A capability bundle in the SPEC §8 shape, ready to be dumped as YAML."""
    return {"name": name, "tools": [tool.bundle_entry() for tool in tools]}


@dataclass(frozen=True)
class ToolResult:
    """What goes back to the model: text, and whether it is a tool execution error."""

    is_error: bool
    text: str
    decision: GateDecision | None = field(default=None, compare=False)


class ToolRunner:
    """Runs a model's tool call: the gate first, then the local tool, never the other way round.

    Denials, pending approvals, confinement and executor refusals come back as error
    `ToolResult`s the model can read. A `GateAuthError` (the run is over) is raised.
    """

    def __init__(
        self,
        client: GateClient,
        workspace: Workspace,
        executor: Executor | None = None,
        *,
        tools: Iterable[ToolSpec] = SANDBOX_BASIC,
        wait_seconds: int = 25,
        total_wait: float | None = None,
        max_read_bytes: int = 256 * 1024,
    ) -> None:
        self.client = client
        self.workspace = workspace
        self.executor = executor or Executor(workspace)
        self.tools = {tool.name: tool for tool in tools}
        self.wait_seconds = wait_seconds
        self.total_wait = total_wait
        self.max_read_bytes = max_read_bytes
        # Every secret fetched during the run stays masked in everything returned afterwards.
        self.masker = SecretMasker()
        self._known_secrets: set[str] = set()
        # (session_id, tool_call_id) of every call a local tool was started for: a retry of
        # the same id gets the gate's settled allow again, and must not run the tool twice.
        self._started: set[tuple[str, str]] = set()
        self._handlers: dict[
            Handler, Callable[[Mapping[str, Any], GateDecision, dict[str, str]], str]
        ] = {
            "read_file": self._read_file,
            "write_file": self._write_file,
            "list_dir": self._list_dir,
            "run_command": self._run_command,
        }

    def run_tool(
        self, session_id: str, tool_call_id: str, tool: str, arguments: Mapping[str, Any]
    ) -> ToolResult:
        spec = self.tools.get(tool)
        if spec is None and "." in tool:
            return self._brokered(session_id, tool_call_id, tool, arguments)
        gate_arguments = self.gate_arguments(spec, arguments) if spec else dict(arguments)
        try:
            decision = self.client.ask(
                session_id,
                tool_call_id,
                tool,
                gate_arguments,
                wait_seconds=self.wait_seconds,
                total_wait=self.total_wait,
            )
        except GateAuthError:
            raise
        except (GateError, ValueError) as error:
            return self._error(f"The call to {tool} was not run: {error}")
        if not decision.allowed:
            return self._error(decision.as_tool_error(), decision)
        if spec is None:
            return self._error(f"The tool {tool} is not available in this sandbox.", decision)
        if (session_id, tool_call_id) in self._started:
            return ToolResult(
                is_error=True,
                text=f"The call to {tool} already ran (tool call {tool_call_id}); it is not run "
                "again and its result is not available again.",
                decision=decision,
            )
        try:
            secrets = self._secrets_for(spec, session_id, tool_call_id)
            self._started.add((session_id, tool_call_id))
            text = self._handlers[spec.handler](gate_arguments, decision, secrets)
        except GateAuthError:
            raise
        except (WorkspaceEscape, CommandRefused) as refusal:
            return self._error(f"Refused: {refusal}", decision)
        except GateError as error:
            return self._error(f"The call to {tool} was not run: {error}", decision)
        except _ToolFailure as failure:
            return self._error(str(failure), decision)
        except OSError as error:
            return self._error(f"{tool} failed: {_os_error_text(error)}", decision)
        return ToolResult(is_error=False, text=self.masker.mask_text(text), decision=decision)

    def gate_arguments(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as the gate sees them; a path is shown as the real workspace path it opens.

        A path that resolves inside the workspace is sent resolved (symbolic links followed), so
        the policy judges the file that will actually be opened. One that does not resolve is
        sent as given, under the workspace root, for the gate to judge and record; confinement
        refuses it afterwards.
        """
        shown = dict(arguments)
        match = spec.match_argument
        if match and match.kind == "path" and isinstance(arguments.get(match.name), str):
            value = arguments[match.name]
            try:
                shown[match.name] = self.workspace.virtual_path(self.workspace.resolve(value))
            except OSError:
                shown[match.name] = self.workspace.virtual_path(value)
        return shown

    def _secrets_for(self, spec: ToolSpec, session_id: str, tool_call_id: str) -> dict[str, str]:
        if not spec.secrets:
            return {}
        secrets = self.client.fetch_secrets(
            spec.name, session_id=session_id, tool_call_id=tool_call_id
        )
        for value in secrets.values():
            self.masker.add(value)
            self._known_secrets.add(value)
        return secrets

    def _read_file(
        self, arguments: Mapping[str, Any], decision: GateDecision, secrets: dict[str, str]
    ) -> str:
        path = _text_argument(arguments, "path")
        # Read past the limit far enough that a secret the limit cuts is still masked whole.
        raw = self.workspace.open_read(
            path, max_bytes=self.max_read_bytes + 1 + self.masker.longest
        )
        data = self.masker.mask_bytes(raw)
        if b"\x00" in data:
            return f"{path} is a binary file; its content is not shown."
        text = data[: self.max_read_bytes].decode("utf-8", "replace")
        if len(raw) > self.max_read_bytes:
            text += f"\n[truncated: only the first {self.max_read_bytes} bytes are shown]"
        return text

    def _write_file(
        self, arguments: Mapping[str, Any], decision: GateDecision, secrets: dict[str, str]
    ) -> str:
        path = _text_argument(arguments, "path")
        written = self.workspace.write(
            path, _text_argument(arguments, "content"), create_parents=True
        )
        return f"Wrote {written} bytes to {path}."

    def _list_dir(
        self, arguments: Mapping[str, Any], decision: GateDecision, secrets: dict[str, str]
    ) -> str:
        path = _text_argument(arguments, "path")
        entries = self.workspace.list_dir(path)
        if not entries:
            return f"{path} is empty."
        lines = []
        size = 0
        for entry in entries:
            if entry.kind == "directory":
                line = f"{entry.name}/"
            elif entry.kind == "file":
                line = f"{entry.name}  ({entry.size} bytes)"
            else:
                line = f"{entry.name}  ({entry.kind})"
            size += len(line.encode("utf-8", "surrogateescape")) + 1
            if size > self.max_read_bytes:
                lines.append(
                    f"[truncated: {len(entries)} entries, only the first {len(lines)} are shown]"
                )
                break
            lines.append(line)
        return "\n".join(lines)

    def _run_command(
        self, arguments: Mapping[str, Any], decision: GateDecision, secrets: dict[str, str]
    ) -> str:
        command = _text_argument(arguments, "command")
        plan = self.executor.plan(command)
        if plan.exfiltration and decision.rule_action != "ALWAYS":
            raise CommandRefused(
                f"`{plan.program}` can send data out of the sandbox; it runs only under an "
                "explicit ALWAYS rule of the policy, not by default or by approval"
            )
        result = self.executor.run(command, secrets=secrets, masked=self._known_secrets)
        if not result.succeeded:
            raise _ToolFailure(result.as_text())
        return result.as_text()

    def _brokered(
        self, session_id: str, tool_call_id: str, tool: str, arguments: Mapping[str, Any]
    ) -> ToolResult:
        try:
            outcome = self.client.call_brokered(
                session_id,
                tool_call_id,
                tool,
                arguments,
                wait_seconds=self.wait_seconds,
                total_wait=self.total_wait,
            )
        except GateAuthError:
            raise
        except (GateError, ValueError) as error:
            return self._error(f"The call to {tool} was not run: {error}")
        if not outcome.allowed:
            return self._error(outcome.as_tool_error(), outcome)
        if outcome.result is None:
            text = (
                f"The call to {tool} already ran (replayed); its result is not available again."
                if outcome.replayed
                else f"The call to {tool} returned no result."
            )
            return ToolResult(is_error=False, text=text, decision=outcome)
        text = self.masker.mask_text(_content_text(outcome.result.get("content")))
        return ToolResult(
            is_error=outcome.result.get("isError") is True, text=text, decision=outcome
        )

    def _error(self, text: str, decision: GateDecision | None = None) -> ToolResult:
        return ToolResult(is_error=True, text=self.masker.mask_text(text), decision=decision)


class _ToolFailure(Exception):
    """The tool ran and failed; its own output is the error text."""


def _text_argument(arguments: Mapping[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str):
        raise _ToolFailure(f"The argument {name!r} is required and must be a string.")
    return value


def _content_text(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    parts = []
    for item in content:
        if isinstance(item, dict) and item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        elif isinstance(item, dict):
            parts.append(f"[{item.get('type', 'unknown')} content]")
    return "\n".join(parts)


def _os_error_text(error: OSError) -> str:
    reason = error.strerror or str(error)
    return f"{reason}: {error.filename}" if error.filename else reason
