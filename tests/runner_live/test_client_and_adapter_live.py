"""The rest of the runner's client against a live server: budget, the SDK adapter, finishing."""

import asyncio

import pytest

from governance.models import ToolCall, UsageEntry
from ledger.models import Event
from runner import BudgetExhausted, GateAuthError, GateClient, GatePermission, Reservation
from tests.runner_live.conftest import create_run

pytestmark = pytest.mark.slow


def event_types(run_id) -> list[str]:
    return list(Event.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True))


def test_the_client_books_budget_once_per_key_and_a_refusal_is_data(fluidbox_server, operator):
    run_id, token = create_run(operator, budget_tokens=20_000)
    client = GateClient(fluidbox_server.url, run_id, token)

    first = client.reserve("turn-1", max_output_tokens=4096, input_tokens_upper_bound=12_000)
    retried = client.reserve("turn-1", max_output_tokens=4096, input_tokens_upper_bound=12_000)
    refused = client.reserve("turn-2", max_output_tokens=4096, input_tokens_upper_bound=12_000)
    settled = client.settle(first.id, input_tokens=9_000, output_tokens=800, cost_usd="0.0123")
    settled_again = client.settle(
        first.id, input_tokens=9_000, output_tokens=800, cost_usd="0.0123"
    )
    client.close()

    assert isinstance(first, Reservation) and first.reserved_tokens == 16_096
    assert retried == first
    assert refused == BudgetExhausted(remaining_tokens=20_000 - 16_096, request_key="turn-2")
    assert (settled["replayed"], settled_again["replayed"]) == (False, True)
    assert UsageEntry.objects.filter(run_id=run_id).count() == 1
    types = event_types(run_id)
    assert types.count("budget.reserved") == 1
    assert types.count("budget.denied") == 1
    assert types.count("budget.settled") == 1


def test_the_sdk_permission_layer_asks_the_live_gate_and_both_entry_points_share_one_call(
    fluidbox_server, operator
):
    run_id, token = create_run(operator)
    client = GateClient(fluidbox_server.url, run_id, token)
    permission = GatePermission(client, session_id="sdk-session")

    async def ask():
        hook = await permission.pre_tool_use(
            {"tool_name": "Bash", "tool_input": {"command": "ls -la; rm -rf /"}}, "tu-1", None
        )
        callback = await permission.can_use_tool(
            "Bash", {"command": "ls -la; rm -rf /"}, {"tool_use_id": "tu-1"}
        )
        read = await permission.can_use_tool(
            "Read", {"file_path": "/workspace/README.md"}, {"tool_use_id": "tu-2"}
        )
        return hook, callback, read

    hook, callback, read = asyncio.run(ask())

    assert hook["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "run_command:rm *" in hook["hookSpecificOutput"]["permissionDecisionReason"]
    assert callback["behavior"] == "deny" and callback["interrupt"] is False
    assert read == {"behavior": "allow"}
    calls = ToolCall.objects.filter(run_id=run_id).order_by("tool_call_id")
    assert [(c.tool_call_id, c.tool, c.decision) for c in calls] == [
        ("tu-1", "run_command", "deny"),
        ("tu-2", "read_file", "allow"),
    ]

    client.finish()
    after = asyncio.run(permission.can_use_tool("Read", {"file_path": "x"}, {"tool_use_id": "t3"}))
    with pytest.raises(GateAuthError):
        client.ask("sdk-session", "t4", "read_file", {"path": "/workspace/x"})
    client.close()

    assert after["behavior"] == "deny" and after["interrupt"] is True
    assert event_types(run_id).count("tool.requested") == 2
