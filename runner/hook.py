"""The pre-tool hook of agent CLIs: every built-in tool call asks fluidbox's gate first.

    python -m runner.hook claude-code --url URL --run RUN_ID     (token: $FLUIDBOX_RUN_TOKEN)

Reads the CLI's hook JSON on stdin, asks `POST /v1/runs/{id}/permission` (waiting while a
human decides, up to --max-wait), and prints the CLI's answer. It never answers a local
"ask" and never "allow"s what fluidbox did not allow: unreachable, a void token, a crash, or
a call still waiting when the bound runs out all deny, with a reason the model reads.

Calls of fluidbox's own MCP server (`mcp__<server>__…`) are left to that endpoint, which
gates them itself under the same tool-call id: deciding them here too would record the
call twice.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from typing import Any

from runner.agent_tools import DIALECTS, GateCall
from runner.client import GateClient
from runner.errors import GateAuthError, GateError, GateUnavailable

TOKEN_ENV = "FLUIDBOX_RUN_TOKEN"
DEFAULT_MAX_WAIT = 290.0


class Verdict:
    def __init__(self, allow: bool, reason: str) -> None:
        self.allow = allow
        self.reason = reason


def _answer(dialect: str, verdict: Verdict) -> dict[str, Any]:
    if dialect == "gemini-cli":
        return {"decision": "allow" if verdict.allow else "deny", "reason": verdict.reason}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow" if verdict.allow else "deny",
            "permissionDecisionReason": verdict.reason,
        }
    }


def _own_mcp_tool(dialect: str, event: dict, server: str) -> bool:
    name = str(event.get("tool_name", ""))
    if dialect == "gemini-cli":
        context = event.get("mcp_context") or {}
        return isinstance(context, dict) and context.get("server_name") == server
    return name.startswith(f"mcp__{server}__")


def _gate_call(dialect: str, event: dict) -> GateCall:
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        tool_input = {}
    cwd = str(event.get("cwd") or os.getcwd())
    name = str(event.get("tool_name") or "")
    if dialect == "gemini-cli":
        context = event.get("mcp_context")
        if isinstance(context, dict) and context.get("server_name") and context.get("tool_name"):
            return GateCall(f"{context['server_name']}.{context['tool_name']}", tool_input)
    return DIALECTS[dialect](name, tool_input, cwd)


def decide(
    event: dict,
    *,
    dialect: str,
    url: str,
    run_id: str,
    token: str | None,
    mcp_server: str,
    max_wait: float,
) -> Verdict:
    if _own_mcp_tool(dialect, event, mcp_server):
        return Verdict(True, "fluidbox's MCP endpoint gates this call itself")
    if not token:
        return Verdict(False, f"fluidbox: no run token (${TOKEN_ENV} is not set); denied")
    call = _gate_call(dialect, event)
    session_id = str(event.get("session_id") or "agent-cli")[:200]
    tool_call_id = str(event.get("tool_use_id") or f"hook-{uuid.uuid4().hex}")[:200]
    try:
        with GateClient(url, run_id, token, retries=2, timeout=10) as gate:
            decision = gate.ask(
                session_id, tool_call_id, call.tool, call.arguments, total_wait=max_wait
            )
    except GateAuthError as error:
        return Verdict(False, f"fluidbox refused this run's token ({error}); denied")
    except GateUnavailable as error:
        return Verdict(False, f"fluidbox is unreachable ({error}); denied")
    except GateError as error:
        return Verdict(False, f"fluidbox could not decide ({error}); denied")
    if decision.allowed:
        rule = decision.rule_action
        return Verdict(True, f"fluidbox allowed {call.tool}" + (f" ({rule})" if rule else ""))
    if decision.pending:
        approval = decision.approval or {}
        link = f"{url.rstrip('/')}/admin/inbox/{approval.get('id')}/"
        return Verdict(
            False,
            f"fluidbox: {call.tool} still awaits a human's approval ({link}); it did not run. "
            "Try again later.",
        )
    return Verdict(False, decision.as_tool_error())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m runner.hook", description=__doc__.split("\n")[0]
    )
    parser.add_argument("dialect", choices=sorted(DIALECTS))
    parser.add_argument("--url", default=os.environ.get("FLUIDBOX_URL"))
    parser.add_argument("--run", default=os.environ.get("FLUIDBOX_RUN_ID"))
    parser.add_argument("--mcp-server", default=os.environ.get("FLUIDBOX_MCP_SERVER", "fluidbox"))
    parser.add_argument("--max-wait", type=float, default=DEFAULT_MAX_WAIT)
    args = parser.parse_args(argv)
    try:
        event = json.loads(sys.stdin.read() or "{}")
        if not isinstance(event, dict):
            raise ValueError("the hook input is not a JSON object")
        if not args.url or not args.run:
            verdict = Verdict(False, "fluidbox: the hook has no --url/--run; denied")
        else:
            verdict = decide(
                event,
                dialect=args.dialect,
                url=args.url,
                run_id=args.run,
                token=os.environ.get(TOKEN_ENV),
                mcp_server=args.mcp_server,
                max_wait=args.max_wait,
            )
    except Exception as error:  # whatever broke, the call does not run
        verdict = Verdict(False, f"fluidbox hook failed ({type(error).__name__}: {error}); denied")
    sys.stdout.write(json.dumps(_answer(args.dialect, verdict)) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
