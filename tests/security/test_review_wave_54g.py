"""Review wave 54g: the REST API's hardening promises, attacked from the agent's side.

Promise (README "Security", SPEC §6): nothing derived from a call's arguments reaches the
ledger or a stored reason except through the redactor, and a schema denial names the path
and the violated keyword, never the instance. Everything under a secret-looking key
(`password`, `auth`, `credentials`, ...) is the secret: the ledger's preview masks it whole.

The attack: the agent puts the secret where a schema denial quotes it, as a property NAME
inside an object under a secret-looking key (a credential map keyed by the secret, a
password written as a key). The denial's location (`/credentials/<key>`) and the
`additionalProperties` text (`unexpected '<key>'`) carry agent-written key names. The
redactor collected every value under a secret-looking key, but not the keys inside it, so
the secret reached the answer, `ToolCall.reason` and the `tool.decision` event verbatim,
while the same call's `arguments_preview` masked it.
"""

import json

import pytest

from governance.models import ToolCall
from governance.services.bundles import bundle_import
from governance.services.policies import policy_save
from ledger.models import Event
from tests.conftest import Api, run_body

pytestmark = pytest.mark.django_db

CANARY_MAP_KEY = "cnry-54g-map-key-3f9a1c"
CANARY_EXTRA_KEY = "hunter2-cnry-54g-extra-7b2d"
CANARY_LIST_KEY = "cnry-54g-list-key-c0e5"

BUNDLE = """
name: login-tools
tools:
  - name: login
    access: read
    schema:
      type: object
      properties:
        credentials: {type: object, additionalProperties: {type: string}}
        auth:
          type: object
          properties:
            user: {type: string}
          additionalProperties: false
        passwords:
          type: array
          items: {type: object, additionalProperties: {type: string}}
      additionalProperties: false
  - name: note
    access: read
    schema: {type: object}
"""

POLICY = """
name: default
rules:
  - pattern: "login:*"
    action: ALWAYS
  - pattern: "note:*"
    action: ALWAYS
"""


@pytest.mark.parametrize(
    ("arguments", "canary"),
    [
        # A credential map keyed by the secret, with a value of the wrong type.
        ({"credentials": {CANARY_MAP_KEY: 1}}, CANARY_MAP_KEY),
        # The password written as a key of an object that allows no other keys.
        ({"auth": {"user": "alice", CANARY_EXTRA_KEY: True}}, CANARY_EXTRA_KEY),
        # The same, one list deeper.
        ({"passwords": [{CANARY_LIST_KEY: 7}]}, CANARY_LIST_KEY),
    ],
    ids=["map-key", "additional-property", "in-a-list"],
)
def test_a_secret_written_as_a_key_under_a_secret_key_reaches_no_reason_or_event(
    org, operator, arguments, canary
):
    bundle_import(org=org, text=BUNDLE)
    policy_save(org=org, text=POLICY, author=None)
    created = operator.post("/v1/runs", run_body(bundles=["login-tools"]))
    assert created.status_code == 201, created.content
    run_id, runner = created.json()["id"], Api(created.json()["session_token"])

    answer = runner.post(
        f"/v1/runs/{run_id}/permission",
        {"session_id": "s-1", "tool_call_id": "c-1", "tool": "login", "arguments": arguments},
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert (body["decision"], body["source"]) == ("deny", "schema")

    # The ledger's own preview masks everything under the secret-looking key...
    requested = Event.objects.get(run_id=run_id, type="tool.requested")
    assert canary not in json.dumps(requested.data)
    # ...and so must every text derived from the same arguments.
    assert canary not in answer.content.decode()
    assert canary not in ToolCall.objects.get(run_id=run_id, tool_call_id="c-1").reason
    decision = Event.objects.get(run_id=run_id, type="tool.decision")
    assert canary not in json.dumps(decision.data)
    # The denial still says where and what: the path down to the secret-looking key.
    assert "violates" in body["reason"]


def test_an_agents_secret_values_cannot_erase_the_ledgers_record_of_the_decision(org, operator):
    """Promise (SPEC §6): the ledger records each call's decision (`tool.decision` carries
    `decision`, `source`, `reason`, `rule`); only what derives from the arguments is masked.

    The attack: the agent picks its "secrets" to be the words of the event itself. Every
    value under a secret-looking key is masked wherever it shows up in the event, keys of
    the event included, so `{"password": "allow", "api_key": "decision"}` turns the
    event's `"decision": "allow"` into `"[redacted]": "[redacted]"`, and with
    `"token": "reason"` the two masked keys collide and one field is lost. The append-only
    record, the event API and every audit sink then hold a decision event that does not say
    what was decided: an agent hides its allowed calls from an auditor's filter."""
    bundle_import(org=org, text=BUNDLE)
    policy_save(org=org, text=POLICY, author=None)
    created = operator.post("/v1/runs", run_body(bundles=["login-tools"]))
    assert created.status_code == 201, created.content
    run_id, runner = created.json()["id"], Api(created.json()["session_token"])

    arguments = {
        "password": "allow",
        "api_key": "decision",
        "token": "reason",
        "secret": "note",  # the tool's name
        "passphrase": "policy",  # the deciding stage (`source`)
    }
    answer = runner.post(
        f"/v1/runs/{run_id}/permission",
        {"session_id": "s-1", "tool_call_id": "c-1", "tool": "note", "arguments": arguments},
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["decision"] == "allow"

    events = operator.get(f"/v1/runs/{run_id}/events")
    assert events.status_code == 200, events.content
    decided = [e for e in events.json()["events"] if e["type"] == "tool.decision"]
    assert len(decided) == 1
    data = decided[0]["data"]
    assert data.get("decision") == "allow", data
    assert "reason" in data, data
    assert (data["tool"], data["source"]) == ("note", "policy"), data
    # The text derived from the arguments is still masked.
    requested = [e for e in events.json()["events"] if e["type"] == "tool.requested"]
    assert "allow" not in requested[0]["data"]["arguments_preview"]
