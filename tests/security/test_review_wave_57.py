"""Review wave 57 (h5): the REST API's bodies from a person's and an operator's side.

Only `POST /v1/runs` refused a field it does not know (wave 56c); every other body dropped
one without a word and went on as if it had not been sent:

- `PUT /v1/policies/{name}` with a misspelt `base_version` (`"base-version"`, `"baseVersion"`)
  saved the draft over a version another admin committed since: the very lost update
  `base_version` exists to stop ("a save committed since is a 409 `policy_changed` instead of
  being undone"), undone silently, answered 201. `base_version` also took `"1"`, `1.0` and an
  Arabic-Indic `"١"` as 1.
- `POST /v1/approvals/{id}/decision` with `"remember_scope": "run"` (the answer's own field
  name) or `"Remember"` approved once and remembered nothing, answered 200; a `"reason"` the
  approver wrote was dropped: the decision recorded is not the one sent.
- `POST /v1/policies/{name}/evaluate` with `"args"` for `arguments` answered the verdict of a
  call without arguments (a dry run of another call); `POST /v1/connections` with
  `"credentials"` made a connection without its credential.

Each is now a 400 naming the field, that decides, saves and creates nothing.
"""

import pytest

from governance.models import Approval, Connection, Policy, RunGrant
from governance.services.orgs import api_key_create
from ledger.models import Event
from tests.conftest import Api
from tests.governance.gate.test_pipeline import ask

DRAFT = "name: default\nrules:\n  - pattern: 'read_file:*'\n    action: ASK\n"
OTHER = "name: default\nrules:\n  - pattern: 'read_file:*'\n    action: ALWAYS\n"


@pytest.fixture
def admin(org, admin_user) -> Api:
    return Api(api_key_create(org=org, user=admin_user, name="ada").plaintext)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "field, value",
    [
        ("base-version", None),
        ("baseVersion", None),
        ("base_version", "as string"),
        ("base_version", "as float"),
        ("base_version", "١"),
    ],
    ids=["base-version", "baseVersion", "string", "float", "arabic-indic"],
)
def test_a_misspelt_base_version_does_not_undo_a_save_committed_since(
    org, operator, admin, field, value
):
    # Proves: an admin's draft made from v1, saved after an operator committed v2, with the
    # base version misspelt or not a JSON integer, is a 400 that saves nothing; v2 stays
    # current. Before the fix: 201, v3 = the draft, v2's change silently undone (or, for a
    # string/float/Arabic-Indic digit, read as 1).
    policy = Policy.objects.get(org=org)
    base = policy.current_version.number
    saved = operator.client.put("/v1/policies/default", {"yaml": OTHER}, format="json")
    assert saved.status_code == 201, saved.content
    current = Policy.objects.get(org=org).current_version_id
    given = {"as string": str(base), "as float": float(base)}.get(value, value)
    body = {"yaml": DRAFT, field: base if value is None else given}

    response = admin.client.put("/v1/policies/default", body, format="json")

    assert response.status_code == 400, response.content
    assert field in str(response.json()), response.content
    assert Policy.objects.get(org=org).current_version_id == current


@pytest.mark.django_db
@pytest.mark.parametrize(
    "extra",
    [{"remember_scope": "run"}, {"Remember": "policy"}, {"reason": "looks fine"}],
    ids=["remember_scope", "Remember", "reason"],
)
def test_an_unknown_field_in_a_decision_is_a_400_that_decides_nothing(
    org, make_run, approver, extra
):
    # Proves: a decision body with a field the endpoint does not take is refused naming it,
    # and the approval stays pending with no grant and no ledger event. Before the fix: 200,
    # approved once, the field (a scope the approver chose, a reason) silently dropped.
    run_id, runner = make_run()
    approval_id = ask(runner, run_id, "send_email", {"to": "ops@example.com"})["approval"]["id"]

    response = Api(user=approver).post(
        f"/v1/approvals/{approval_id}/decision", {"decision": "approve", **extra}
    )

    assert response.status_code == 400, response.content
    assert next(iter(extra)) in response.json()["detail"]
    assert Approval.objects.get(pk=approval_id).status == "pending"
    assert not RunGrant.objects.exists()
    assert not Event.objects.filter(run_id=run_id, type="approval.decided").exists()


@pytest.mark.django_db
def test_an_evaluation_with_a_misspelt_arguments_is_a_400_not_another_calls_verdict(operator):
    # Proves: the dry run refuses `args` instead of evaluating the tool with no arguments.
    response = operator.post(
        "/v1/policies/default/evaluate",
        {"tool": "run_command", "args": {"command": "rm -rf /"}},
    )
    assert response.status_code == 400, response.content
    assert "args" in response.json()["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        {"credentials": {"header": "Authorization", "value": "Bearer t0ken-0123456789"}},
        {"credential": {"hedaer": "Authorization", "value": "Bearer t0ken-0123456789"}},
    ],
    ids=["credentials", "credential.hedaer"],
)
def test_a_connection_with_a_misspelt_credential_field_is_a_400_and_creates_nothing(
    operator, echo_server, body
):
    # Proves: a connection body (or its credential) with a field it does not know is refused,
    # not created without the credential (or with it under another name than asked).
    response = operator.post(
        "/v1/connections",
        {"slug": "tracker", "kind": "shared", "transport": "streamable-http"}
        | {"url": echo_server.url}
        | body,
    )
    assert response.status_code == 400, response.content
    assert not Connection.objects.exists()


# The runner's bodies too (stop 57): the gate call, a reservation and its settlement. A
# settlement's `cost` for `cost_usd` was dropped and the run's spend recorded without it.
@pytest.mark.django_db
def test_the_runners_bodies_refuse_a_field_they_do_not_know(make_run):
    run_id, runner = make_run()
    asked = runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": "s-1",
            "tool_call_id": "c-1",
            "tool": "read_file",
            "arguments": {"path": "/workspace/a"},
            "wait": 30,
        },
    )
    assert asked.status_code == 400, asked.content
    assert "wait" in asked.json()["detail"]

    reserved = runner.post(
        f"/v1/runs/{run_id}/budget/reservations",
        {"request_key": "r-1", "max_output_tokens": 10, "input_tokens_upper_bound": 10},
    )
    assert reserved.status_code == 201, reserved.content
    settled = runner.post(
        f"/v1/runs/{run_id}/budget/reservations/{reserved.json()['id']}/settle",
        {"input_tokens": 5, "output_tokens": 5, "cost": "0.10"},
    )
    assert settled.status_code == 400, settled.content
    assert "cost" in settled.json()["detail"]
    assert not Event.objects.filter(
        run_id=run_id, type__in=["tool.requested", "budget.settled"]
    ).exists()
