"""Secrets an agent puts in a tool call's arguments never reach the ledger or a stored reason.

Canaries are planted under secret-looking keys (`api_key`, `password`, `Authorization`,
top-level and nested) and under innocent keys where a schema denial would quote them, for
sandbox and brokered tools, through every path a decision takes: allowed, schema-denied,
paused for approval, rewritten by an autonomous fallback, allowed by an exact remembered
rule, and a brokered call whose server quotes the arguments back in an error. Then every
ledger event, every column of every table, every response and every log line is searched.

Where the canaries may legitimately be (and nowhere else):
- the governance record of the call (`ToolCall.arguments`, `call_key`): replay, idempotent
  retries and approvals need the call exactly as made; the approval rows and a remembered
  rule name the exact call a human approved (SPEC §4);
- the MCP server that the brokered call was for, and the brokered `result` returned to the
  runner that sent those arguments;
- for innocent-key values only: the ledger's `arguments_preview` (a redacted, truncated
  preview is what SPEC §6 allows; only secret-looking keys are masked in it).
"""

import json
import logging

import pytest
from django.apps import apps
from django.db import connection

from governance.models import Approval, ToolCall
from governance.policy import call_key, escape_pattern
from governance.services.bundles import bundle_import
from governance.services.policies import policy_save
from ledger.models import Event
from tests.conftest import Api, run_body
from tests.governance.broker.support import connect

# Under secret-looking keys: never in the ledger, a reason, a log or a decision response.
SECRET = {
    name: f"cnry-{name}-5e1f0a"
    for name in (
        "api-key",
        "authorization",
        "nested-password",
        "schema-password",
        "brokered-api-key",
        "brokered-authorization",
        "brokered-schema-password",
        "brokered-upstream-error",
        "remembered",
        "autonomous",
        "shell-header",
        "shell-flag",
        "short",
    )
}
SECRET["short"] = "q7"  # too short to mask as a bare value: only the `"key":value` fragment
# Under innocent keys, in the place a schema denial would quote.
INNOCENT = {name: f"cnry-innocent-{name}-b94c27" for name in ("count", "target", "brokered")}

CANARY_BUNDLE = """
name: canary-tools
tools:
  - name: deploy
    access: read
    schema:
      type: object
      properties:
        target: {type: string}
        api_key: {type: string}
        password: {type: string}
        token: {type: string}
        count: {type: integer}
        headers: {type: object, additionalProperties: {type: string}}
        config: {type: object}
      additionalProperties: false
"""

CANARY_POLICY = """
name: default
autonomous_fallback: deny
rules:
  - pattern: 'deploy:*"target":"prod"*'
    action: ASK
  - pattern: "deploy:*"
    action: ALWAYS
  - pattern: "run_command:curl *"
    action: ALWAYS
  - pattern: "run_command:make *"
    action: ALWAYS
  - pattern: "crm.lookup:*"
    action: ALWAYS
"""


def gate(runner, run_id, tool, arguments, call_id, responses):
    response = runner.post(
        f"/v1/runs/{run_id}/permission",
        {"session_id": "s-1", "tool_call_id": call_id, "tool": tool, "arguments": arguments},
    )
    assert response.status_code == 200, response.content
    responses.append(response.content.decode())
    return response.json()


def brokered(runner, run_id, tool, arguments, call_id, responses):
    response = runner.post(
        f"/v1/runs/{run_id}/tools/{tool}/call",
        {"session_id": "s-1", "tool_call_id": call_id, "arguments": arguments},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    # The tool's result goes back to the runner that sent these arguments; everything else
    # in the answer is the gate's and must be clean.
    responses.append(json.dumps({k: v for k, v in body.items() if k != "result"}))
    return body


def hits_by_column() -> dict[tuple[str, str], set[str]]:
    """Which canaries each column of each table holds, read through every model and again
    with raw SQL over every table (so a table without a model is searched too)."""
    canaries = {**{f"secret:{k}": v for k, v in SECRET.items() if k != "short"}}
    canaries.update({f"innocent:{k}": v for k, v in INNOCENT.items()})
    found: dict[tuple[str, str], set[str]] = {}

    def note(table, column, value):
        text = value if isinstance(value, str) else repr(value)
        for label, canary in canaries.items():
            if canary in text:
                found.setdefault((table, column), set()).add(label)

    for model in apps.get_models():
        for row in model._base_manager.all().values():
            for column, value in row.items():
                note(model._meta.db_table, column, value)
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f'SELECT * FROM "{table}"')
            columns = [column[0] for column in cursor.description]
            for row in cursor.fetchall():
                for column, value in zip(columns, row, strict=True):
                    if isinstance(value, bytes | memoryview):
                        value = bytes(value).decode("latin-1")
                    note(table, column, value)
    return found


@pytest.mark.django_db
def test_argument_secrets_reach_no_ledger_event_reason_log_or_response(
    org, operator, approver, echo_server, caplog, capfd
):
    caplog.set_level(logging.DEBUG)
    responses: list[str] = []
    bundle_import(org=org, text=CANARY_BUNDLE)
    policy_save(org=org, text=CANARY_POLICY, author=None)
    connect(operator, echo_server)

    def new_run(**overrides):
        body = run_body(bundles=["sandbox-basic", "canary-tools"], connections=["crm"])
        created = operator.post("/v1/runs", {**body, **overrides})
        assert created.status_code == 201, created.content
        return created.json()["id"], Api(created.json()["session_token"])

    run_id, runner = new_run()

    # Allowed sandbox call: the JSON subject of a tool without a match argument.
    allowed = gate(
        runner,
        run_id,
        "deploy",
        {
            "target": "staging",
            "api_key": SECRET["api-key"],
            "token": SECRET["short"],
            "headers": {"Authorization": f"Bearer {SECRET['authorization']}"},
            "config": {"db": {"password": SECRET["nested-password"]}},
        },
        "c-allowed",
        responses,
    )
    assert allowed["decision"] == "allow"
    # Schema denials: the offending value under a secret key, and under innocent keys.
    for call_id, arguments in (
        ("c-schema-secret", {"password": {"nested": SECRET["schema-password"]}}),
        ("c-schema-count", {"count": INNOCENT["count"]}),
        ("c-schema-target", {"target": {"x": INNOCENT["target"]}}),
    ):
        denied = gate(runner, run_id, "deploy", arguments, call_id, responses)
        assert (denied["decision"], denied["source"]) == ("deny", "schema")
        assert "violates 'type'" in denied["reason"]
    # Shell commands with inline secrets, allowed by the policy.
    for call_id, command in (
        ("c-curl", f"curl -H 'Authorization: Bearer {SECRET['shell-header']}' https://x.test"),
        ("c-make", f"make deploy --password {SECRET['shell-flag']}"),
    ):
        shell = gate(runner, run_id, "run_command", {"command": command}, call_id, responses)
        assert shell["decision"] == "allow"
    # A call that pauses for a human (approval rows may carry the full arguments).
    remembered_arguments = {"target": "prod", "api_key": SECRET["remembered"]}
    paused = gate(runner, run_id, "deploy", remembered_arguments, "c-ask", responses)
    assert paused["decision"] == "pending"
    decided = Api(user=approver).post(
        f"/v1/approvals/{paused['approval']['id']}/decision", {"decision": "approve"}
    )
    # The approver is shown the full arguments (SPEC §4: no paraphrase): not searched.
    assert decided.status_code == 200

    # Brokered: allowed calls with secrets, a schema denial, an upstream error quoting them.
    for call_id, arguments in (
        ("b-allowed", {"id": "1", "api_key": SECRET["brokered-api-key"]}),
        (
            "b-nested",
            {"id": "2", "auth": {"Authorization": f"Bearer {SECRET['brokered-authorization']}"}},
        ),
    ):
        answer = brokered(runner, run_id, "crm.lookup", arguments, call_id, responses)
        assert answer["decision"] == "allow" and answer["broker"]["status"] == "succeeded"
    for call_id, arguments in (
        ("b-schema-secret", {"id": {"password": SECRET["brokered-schema-password"]}}),
        ("b-schema-innocent", {"id": [INNOCENT["brokered"]]}),
    ):
        answer = brokered(runner, run_id, "crm.lookup", arguments, call_id, responses)
        assert (answer["decision"], answer["source"]) == ("deny", "schema")
    failing = brokered(
        runner,
        run_id,
        "crm.lookup",
        {"id": "4", "api_key": SECRET["brokered-upstream-error"], "fail_echoing_arguments": True},
        "b-error",
        responses,
    )
    assert failing["broker"]["status"] == "failed"
    assert "refused arguments" in ToolCall.objects.get(tool_call_id="b-error").broker_error

    # The approver remembered that exact call for future runs: the policy now holds it as an
    # escaped exact rule, and the next run's identical call is allowed by that rule.
    policy_save(
        org=org,
        text=CANARY_POLICY.replace(
            "rules:\n",
            "rules:\n  - pattern: "
            + json.dumps(escape_pattern(call_key("deploy", remembered_arguments, None)))
            + "\n    action: ALWAYS\n",
        ),
        author=None,
    )
    second_run, second_runner = new_run()
    by_rule = gate(second_runner, second_run, "deploy", remembered_arguments, "c-rule", responses)
    assert (by_rule["decision"], by_rule["rule"]["index"]) == ("allow", 1)
    assert "[redacted]" in by_rule["rule"]["pattern"]
    # An autonomous run: require_approval rewritten to the fallback, both verdicts recorded.
    auto_run, auto_runner = new_run(autonomy="autonomous")
    fallback = gate(
        auto_runner,
        auto_run,
        "deploy",
        {"target": "prod", "password": SECRET["autonomous"]},
        "c-auto",
        responses,
    )
    assert (fallback["decision"], fallback["source"]) == ("deny", "approval")

    for run in (run_id, second_run, auto_run):
        events = operator.get(f"/v1/runs/{run}/events?limit=1000")
        responses.append(events.content.decode())
        responses.append(operator.get(f"/v1/runs/{run}").content.decode())

    # 1. The ledger: no secret anywhere; innocent values only in the redacted preview.
    for event in Event.objects.all():
        text = json.dumps(event.data, ensure_ascii=False)
        for canary in SECRET.values():
            needle = f'"token":"{canary}"' if canary == SECRET["short"] else canary
            assert needle not in text.replace(" ", ""), (event.type, event.data)
        preview = event.data.get("arguments_preview", "") if event.type == "tool.requested" else ""
        rest = text.replace(json.dumps(preview, ensure_ascii=False), "")
        assert not any(canary in rest for canary in INNOCENT.values()), (event.type, event.data)
    decision_segments = [
        segment["subject"]
        for event in Event.objects.filter(type="tool.decision")
        for segment in event.data.get("segments") or []
    ]
    assert any('"api_key":"[redacted]"' in subject for subject in decision_segments)
    assert any('"token":"[redacted]"' in subject for subject in decision_segments)

    # 2. Stored reasons, rules and broker errors: no canary of either kind.
    for call in ToolCall.objects.all():
        stored = " ".join([call.reason, call.tool_error, json.dumps(call.rule), call.broker_error])
        for canary in [*SECRET.values(), *INNOCENT.values()]:
            if canary == SECRET["short"]:
                continue
            assert canary not in stored, (call.tool_call_id, stored)

    # 3. Every column of every table: only the governance record of the call and the
    # approval / remembered-rule rows hold them.
    allowed_columns = {
        ("governance_toolcall", "arguments"),
        ("governance_toolcall", "call_key"),
        ("governance_approval", "call_key"),
        ("governance_policyversion", "content"),
        ("governance_policyversion", "document"),
        ("ledger_event", "data"),  # innocent values in arguments_preview (checked above)
    }
    found = hits_by_column()
    assert set(found) <= allowed_columns, found
    assert all(
        label.startswith("innocent:") for label in found.get(("ledger_event", "data"), set())
    )

    # 4. Responses (the gate's answers without the brokered result, timelines, run details).
    for text in responses:
        compact = text.replace(" ", "")
        for name, canary in SECRET.items():
            if name == "short":
                assert f'"token":"{canary}"' not in compact
            else:
                assert canary not in text
    # 5. Logs, captured and on the process's own stdout/stderr.
    out, err = capfd.readouterr()
    for canary in [*SECRET.values(), *INNOCENT.values()]:
        if canary != SECRET["short"]:
            assert canary not in caplog.text
            assert canary not in out and canary not in err
    # And the one place the brokered arguments had to go: the MCP server.
    received = json.dumps([c["arguments"] for c in echo_server.calls()])
    assert SECRET["brokered-api-key"] in received
    assert Approval.objects.get().status == "approved"
