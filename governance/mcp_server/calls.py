"""One `tools/call` through the broker service, and its answer shaped as an MCP result.

The same `broker_call` as `POST /v1/runs/{id}/tools/{tool}/call`: one gate, one broker, one
tool-call record. The MCP layer only chooses the ids, the waiting rhythm and the wording.
"""

from dataclasses import dataclass
from typing import Any
from uuid import uuid4

from django.conf import settings

from governance.binding_state import BindingNow
from governance.errors import ServiceError
from governance.mcp_server.catalog import frozen_name_for
from governance.models import Approval, Decision, FrozenTool, Run, ToolCall
from governance.schemas import arguments_refusal
from governance.services.broker import BrokeredAnswer, broker_call
from governance.services.notifications import approval_page_url

# The client's own id for a tool call, read from the request's `_meta`, first match wins.
# Claude Code sends `claudecode/toolUseId` (the model's `tool_use` id, the one its hooks get
# as `tool_use_id`), Codex CLI `callId` (the model's `call_id`, its hooks' `tool_use_id`);
# any client may send `fluidbox/toolCallId`.
CLIENT_CALL_ID_KEYS = ("claudecode/toolUseId", "fluidbox/toolCallId", "callId")
# Calls through the endpoint share one session id: the tool-call ids clients send (model
# tool-use ids) are unique on their own, and the hook for Claude Code uses the same one.
MCP_SESSION_ID = "mcp"
MAX_ID_LENGTH = 200
_TOOL_NAME_LENGTH = ToolCall._meta.get_field("tool").max_length


@dataclass(frozen=True)
class McpAnswer:
    """What the endpoint answers: a result body, and whether the call is still waiting."""

    content_text: str | None
    result: dict[str, Any] | None
    pending_approval: Approval | None
    tool: str
    tool_call_id: str

    @property
    def pending(self) -> bool:
        return self.pending_approval is not None


def client_call_id(meta: dict[str, Any] | None) -> str:
    """The idempotency key: the client's tool-call id from `_meta`, else a fresh one."""
    for key in CLIENT_CALL_ID_KEYS:
        value = (meta or {}).get(key)
        if isinstance(value, str) and 0 < len(value) <= MAX_ID_LENGTH and _recordable(value):
            return value
    return f"mcp-{uuid4().hex}"


def _recordable(name: str) -> bool:
    """Whether the ledger can hold an attempt under this name: PostgreSQL text holds no NUL
    and only valid UTF-8 (no lone surrogate), and the column is this long."""
    if "\x00" in name or len(name) > _TOOL_NAME_LENGTH:
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(tool: str, tool_call_id: str, text: str) -> McpAnswer:
    return McpAnswer(text, None, None, tool, tool_call_id)


def _answer(frozen_name: str, tool_call_id: str, brokered: BrokeredAnswer) -> McpAnswer:
    body = brokered.as_json()
    if body["decision"] == Decision.PENDING:
        return McpAnswer(None, None, brokered.gate.approval, frozen_name, tool_call_id)
    if body["decision"] != Decision.ALLOW:
        return _text(frozen_name, tool_call_id, body["tool_error"] or body["reason"])
    if body["result"] is not None:
        return McpAnswer(None, body["result"], None, frozen_name, tool_call_id)
    # A retry of a call that already ran: the broker never runs it twice and fluidbox keeps
    # no payloads, so the answer says so instead of inventing one. It is flagged as an
    # error because its content is not the tool's output (a client validating the tool's
    # output schema would otherwise refuse it).
    broker = body["broker"] or {}
    return McpAnswer(
        None,
        {
            "content": [
                {
                    "type": "text",
                    "text": (
                        f"This call ({tool_call_id}) already ran once and is not run again; "
                        f"its outcome was {broker.get('status')!r} (result digest "
                        f"{broker.get('result_digest')}). fluidbox does not keep tool results."
                    ),
                }
            ],
            "isError": True,
        },
        None,
        frozen_name,
        tool_call_id,
    )


def mcp_tool_call(
    *,
    run: Run,
    mcp_name: str,
    arguments: Any,
    tool_call_id: str,
    wait_seconds: float,
    read: tuple[FrozenTool | None, BindingNow | None] | None = None,
) -> McpAnswer:
    """Gate and broker one call (or re-attach to it); waits up to `wait_seconds` on an ASK.
    `read`: the frozen tool `mcp_name` stands for and its binding, when the caller has just
    read them (the token check, see `server.PrefetchedTool`)."""
    frozen_name = frozen_name_for(run, mcp_name)
    if frozen_name is None:
        if not _recordable(mcp_name):
            # As REST refuses such a name with a 400: answered, and nothing recorded.
            return _text("", tool_call_id, "this run has no tool of that name")
        # Still asked of the gate, which denies it (`capability`) and records the attempt.
        # It is told the run has no such tool: the name may be the frozen name behind a
        # listed one (`tracker.get_issue`, listed `tracker__get_issue`), which is called by
        # its listed name only.
        frozen_name, read = mcp_name, (None, None)
    problem = arguments_refusal(arguments)
    if problem is not None:
        # As REST refuses them with a 400: answered, and nothing recorded or sent.
        return _text(frozen_name, tool_call_id, problem)
    try:
        brokered = broker_call(
            run=run,
            session_id=MCP_SESSION_ID,
            tool_call_id=tool_call_id,
            tool=frozen_name,
            arguments=arguments,
            wait_seconds=wait_seconds,
            read=read,
        )
    except ServiceError as error:  # a finished run, a reused id, a sandbox tool: readable, no 500
        return _text(frozen_name, tool_call_id, f"fluidbox refused the call: {error.detail}")
    return _answer(frozen_name, tool_call_id, brokered)


def awaiting_text(answer: McpAnswer) -> str:
    approval = answer.pending_approval
    return (
        f"fluidbox: the call {answer.tool!r} awaits a human's approval "
        f"({approval_page_url(approval)}, expires {approval.expires_at:%Y-%m-%d %H:%M:%S} UTC). "
        f"It has not run. Retry the same call with the same tool-call id "
        f"({answer.tool_call_id}) to wait for the decision again; a new id asks again."
    )


def approval_wait_bound() -> float:
    return float(settings.FLUIDBOX_MCP_APPROVAL_WAIT)
