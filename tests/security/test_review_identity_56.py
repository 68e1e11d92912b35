"""Review wave 56, identity and authentication from the attacker's side.

1. A deactivated account still lends its personal connection. README: "Deactivate the
   account and add a new one instead" is how someone is taken out. Their personal key and
   their session then stop (`this API key's user is inactive`), but the gate's binding
   check asked only whether the owner's *membership* is active: a run bob created with his
   own key before he left kept calling his tracker with his credential, and an operator
   could still create a new run "invoked by bob" (SPEC: the invoker must be an active
   member) for a person who can no longer sign in to answer for it.

2. Authorization header oddities, a session without its CSRF token, Basic with the key as
   password, a key in the query string or a cookie: each refused and nothing written (these
   held; pinned so they keep holding).
"""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from governance.models import ApiKey, Connection, Run
from governance.services.orgs import api_key_create
from ledger.models import Event
from tests.conftest import Api, run_body
from tests.security.conftest import connect_bobs_tracker

pytestmark = pytest.mark.django_db


@pytest.fixture
def bobs_connection(org, operator, bob, bob_key, tracker):
    connection_id = connect_bobs_tracker(operator, tracker, credential="Bearer x")
    reconnected = bob_key.post(
        f"/v1/connections/{connection_id}/reconnect",
        {"credential": {"header": "Authorization", "value": "Bearer b0bs-own"}},
    )
    assert reconnected.status_code == 200, reconnected.content
    return connection_id


def deactivate_account(user: User) -> None:
    # What the portal's user page does when a superuser unticks "Active".
    user.is_active = False
    user.save(update_fields=["is_active"])


def test_a_deactivated_accounts_personal_connection_lends_its_credential_to_no_run(
    bob, bob_key, bobs_connection, tracker
):
    """Proves: once bob's account is deactivated, a run he created earlier (its binding has
    his own consent) can no longer call his connection with his credential: the gate denies
    with `binding`, the tracker receives nothing, the ledger records the deny."""
    created = bob_key.post("/v1/runs", run_body(bundles=[], connections=["bobtracker"]))
    assert created.status_code == 201, created.content
    run_id, runner = created.json()["id"], Api(created.json()["session_token"])

    deactivate_account(bob)
    assert bob_key.get("/v1/connections").status_code == 401  # his key stopped already

    response = runner.post(
        f"/v1/runs/{run_id}/tools/bobtracker.create_issue/call",
        {"session_id": "s-1", "tool_call_id": "c-1", "arguments": {"title": "after he left"}},
    )
    assert response.status_code == 200, response.content
    answer = response.json()
    assert (answer["decision"], answer["source"]) == ("deny", "binding"), answer
    assert answer["result"] is None
    assert tracker.calls() == []
    decision = Event.objects.get(run_id=run_id, type="tool.decision")
    assert (decision.data["decision"], decision.data["source"]) == ("deny", "binding")


def test_an_operator_cannot_name_a_deactivated_account_as_a_runs_invoker(org, operator, bob):
    """Proves: an operator key cannot create a run "invoked by bob" once bob's account is
    deactivated (he could not sign in to answer for it); no run row, no ledger event."""
    deactivate_account(bob)
    runs_before, events_before = Run.objects.count(), Event.objects.count()

    response = operator.post("/v1/runs", run_body(invoked_by="bob"))

    assert response.status_code == 400, response.content
    assert "not an active member" in response.json()["detail"]
    assert (Run.objects.count(), Event.objects.count()) == (runs_before, events_before)


# --- what held: odd credentials are refused and write nothing ---------------------------


def connection_body(slug):
    return {
        "slug": slug,
        "kind": "shared",
        "transport": "streamable-http",
        "url": "https://tracker.example/mcp",
    }


@pytest.mark.parametrize(
    "header",
    [
        "Bearer  {key} junk",
        "Bearer {key} {key}",
        "Basic {basic}",
        "Token {key}",
        "{key}",
        "Bearer {key},Bearer fbx_other",
        "Bearer {key}\x00",
    ],
)
def test_odd_authorization_headers_are_refused_and_create_nothing(operator_key, header):
    """Proves: a well-formed key inside a malformed header (extra words, another scheme,
    Basic with the key as password, two values joined) never authenticates."""
    import base64

    basic = base64.b64encode(f"ci:{operator_key}".encode()).decode()
    client = Client()
    value = header.format(key=operator_key, basic=basic)
    response = client.post(
        "/v1/connections",
        connection_body("odd"),
        content_type="application/json",
        HTTP_AUTHORIZATION=value,
    )
    assert response.status_code in (400, 401), (value, response.status_code)
    assert operator_key not in response.content.decode()
    assert not Connection.objects.exists()


def test_a_key_in_the_query_string_or_a_cookie_is_no_credential(operator_key):
    client = Client()
    client.cookies["token"] = operator_key
    client.cookies["sessionid"] = operator_key
    response = client.post(
        f"/v1/connections?token={operator_key}&key={operator_key}",
        connection_body("qs"),
        content_type="application/json",
    )
    assert response.status_code in (401, 403)
    assert not Connection.objects.exists()


def test_a_session_without_its_csrf_token_writes_nothing(org, admin_user):
    """Proves: the API takes a person's session only with its CSRF token on a write."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    response = client.post(
        "/v1/connections", connection_body("csrf"), content_type="application/json"
    )
    assert response.status_code == 403
    assert "CSRF" in response.content.decode()
    response = client.post("/v1/runs", run_body(), content_type="application/json")
    assert response.status_code == 403
    assert not Connection.objects.exists() and not Run.objects.exists()


def test_a_revoked_key_and_an_inactive_membership_are_refused_on_reads_and_streams(
    org, make_run, approver
):
    from django.utils import timezone

    run_id, _ = make_run()
    issued = api_key_create(org=org, user=approver, name="alice")
    person = Api(issued.plaintext)
    assert person.get(f"/v1/runs/{run_id}/events").status_code == 200
    ApiKey.objects.filter(pk=issued.key.pk).update(revoked_at=timezone.now())
    for path in (
        f"/v1/runs/{run_id}/events",
        f"/v1/runs/{run_id}/events/stream",
        "/v1/approvals",
        "/v1/ledger/checkpoint",
    ):
        assert person.get(path).status_code == 401, path
