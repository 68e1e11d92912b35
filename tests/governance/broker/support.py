"""Helpers for brokered calls against real MCP servers started on 127.0.0.1 by the tests."""

from tests.conftest import Api, run_body

ECHO_TOOLS = [
    {
        "name": "lookup",
        "description": "Read a record",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "update",
        "description": "Change a record",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "value": {"type": "string"}},
        },
    },
]

BROKER_POLICY = """
name: default
rules:
  - pattern: "crm.lookup:*"
    action: ALWAYS
  - pattern: "crm.update:*"
    action: ALWAYS
  - pattern: "mine.*"
    action: ASK
"""


def connect(operator, server, *, slug="crm", credential="Bearer crm-secret-1", **extra):
    response = operator.post(
        "/v1/connections",
        {
            "slug": slug,
            "kind": extra.pop("kind", "shared"),
            "transport": "streamable-http",
            "url": server.url,
            "credential": {"header": "Authorization", "value": credential},
            **extra,
        },
    )
    assert response.status_code == 201, response.content
    connection_id = response.json()["id"]
    refreshed = operator.post(f"/v1/connections/{connection_id}/tools/refresh")
    assert refreshed.status_code == 200, refreshed.content
    return connection_id


def brokered_run(operator, slug="crm", **overrides):
    response = operator.post("/v1/runs", run_body(bundles=[], connections=[slug], **overrides))
    assert response.status_code == 201, response.content
    return response.json()["id"], Api(response.json()["session_token"])


def call(runner, run_id, tool, arguments, call_id="c-1", wait=0):
    response = runner.post(
        f"/v1/runs/{run_id}/tools/{tool}/call",
        {
            "session_id": "s-1",
            "tool_call_id": call_id,
            "arguments": arguments,
            "wait_seconds": wait,
        },
    )
    assert response.status_code == 200, response.content
    return response.json()


def revoke_on_another_connection(operator, connection_id) -> None:
    """Revoke the connection through the API on another thread, so on another database
    connection (as another web process would), committed when this returns."""
    import threading

    from django.db import connections

    outcome: list = []

    def revoke() -> None:
        try:
            outcome.append(operator.post(f"/v1/connections/{connection_id}/revoke").status_code)
        finally:
            connections.close_all()

    thread = threading.Thread(target=revoke)
    thread.start()
    thread.join()
    assert outcome == [200]


def personal_call_pending(operator, echo_server, member) -> tuple[str, Api, str]:
    """mo (the `member` fixture) owns the personal connection `mine`; an operator's run
    invoked by her, which she has let use it, calls `mine.update`: the call asks her.
    Returns (run id, runner, approval id)."""
    connect(operator, echo_server, slug="mine", kind="personal", owner="mo")
    run_id, runner = brokered_run(operator, slug="mine", invoked_by="mo")
    # The operator's run may use mo's connection once mo says so (tests/security/
    # test_personal_binding_consent.py); then each call still follows the policy.
    binding = Api(user=member).get("/v1/bindings?consent=pending").json()["bindings"][0]
    consent = Api(user=member).post(
        f"/v1/bindings/{binding['id']}/consent", {"decision": "approve"}
    )
    assert consent.status_code == 200, consent.content
    answer = call(runner, run_id, "mine.update", {"id": "1", "value": "x"})
    assert answer["decision"] == "pending"
    return run_id, runner, answer["approval"]["id"]
