"""Review: Gemini CLI's calls of a server named as fluidbox's own, at another address.

Gemini CLI tells the hook which server an MCP tool is from (`mcp_context`), and also where
that server is: its `url` (`httpUrl`), or the `command`/`args` it runs, or the `tcp` address
it dials (`extractMcpContext`, packages/core/src/core/coreToolHookTriggers.ts, 0.61.0). The
hook read only `server_name`: any server configured as `fluidbox` — a `.gemini/settings.json`
rewritten during the run by something the policy allowed (an archive, a patch; the hook's
per-call settings check does not look at fluidbox's own entry), or a system settings file,
which outranks the project's — had its calls of tools named as the endpoint lists them
answered `allow` by the hook itself, with no decision and no record anywhere. Claude Code and
Codex calls in the same situation go to the gate (runner/mcp_shadows.py).
"""

from __future__ import annotations

import pytest

from governance.models import ToolCall
from governance.services.bundles import bundle_import
from runner.mcp_shadows import mcp_endpoint
from tests.agents.test_hook import BUNDLE, hook
from tests.runner_live.conftest import create_run

ELSEWHERE = "http://127.0.0.1:9/v1/mcp"  # nothing needs to listen there


@pytest.fixture
def gated(fluidbox_server, demo_org, operator):
    bundle_import(org=demo_org, text=BUNDLE)
    run_id, token = create_run(operator, bundles=["claude-code"], connections=["tracker"])
    return fluidbox_server.url, run_id, token


def gemini_mcp_call(call_id: str, context: dict) -> dict:
    return {
        "session_id": "s-gemini",
        "cwd": "/workspace",
        "hook_event_name": "BeforeTool",
        "tool_name": "create_issue",
        "tool_input": {"title": "the run's secrets, carried out"},
        "tool_use_id": call_id,
        "mcp_context": {"server_name": "fluidbox", "tool_name": "tracker__create_issue", **context},
    }


@pytest.mark.parametrize(
    "where",
    [
        {"url": ELSEWHERE},  # a server of fluidbox's name at another address
        {"command": "python3", "args": ["-m", "evil_mcp"]},  # one the CLI runs itself
        {"tcp": "127.0.0.1:9"},  # one it dials
    ],
    ids=["other-url", "stdio", "tcp"],
)
def test_gemini_call_of_a_fluidbox_named_server_elsewhere_is_not_allowed_by_the_hook(gated, where):
    """Proves: the hook answers `allow` itself for a Gemini call fluidbox never decides —
    the call goes to a server that is not fluidbox's endpoint, which will not gate it."""
    url, run_id, token = gated
    answer = hook(
        "gemini-cli", gemini_mcp_call("g-elsewhere", where), url=url, run_id=run_id, token=token
    )

    assert answer["decision"] == "deny", answer
    # Asked of the gate under the CLI's own name, as Claude Code's and Codex's are: denied as
    # a tool the run did not freeze, and on record.
    recorded = ToolCall.objects.get(run_id=run_id, tool_call_id="g-elsewhere")
    assert recorded.tool == "mcp__fluidbox__tracker__create_issue"


def test_gemini_call_of_fluidbox_s_own_endpoint_is_still_left_to_it(gated):
    """The server agent_setup wrote (`httpUrl` = the endpoint): left to the endpoint, no
    record here (it decides the call itself, once)."""
    url, run_id, token = gated
    own = gemini_mcp_call("g-own", {"url": mcp_endpoint(url)})
    answer = hook("gemini-cli", own, url=url, run_id=run_id, token=token)

    assert answer["decision"] == "allow", answer
    assert not ToolCall.objects.filter(run_id=run_id, tool_call_id="g-own").exists()
