"""Tenancy and bad input over HTTP, from the attacker's side.

Every `/v1` endpoint that names an object is aimed at another organization's run, approval,
connection, binding, reservation, policy and ledger with each credential of acme: the
answer is the same as for an id nobody has (a 404, or the 403 any object of that kind gets
for the wrong kind of credential), and globex's objects are unchanged. Then input the
portal's lists fed to the database or to `datetime` as it came, each a 500 before: a NUL in a
request's address (PostgreSQL cannot compare one), a list action's row ids that are not
ids, a date-hierarchy year past 9999."""

from dataclasses import dataclass
from uuid import uuid4

import pytest
from django.contrib import admin

from governance.authentication import Actor, ActorKind
from governance.models import (
    Approval,
    ApprovalStatus,
    BindingConsent,
    Connection,
    FrozenBinding,
    Role,
    Run,
    RunStatus,
)
from governance.services.budget import reservation_create
from governance.services.connections import connection_create, photograph_store
from governance.services.gate import permission_request
from governance.services.orgs import api_key_create, user_create
from governance.services.policies import policy_save
from governance.services.runs import run_create
from ledger.models import Event
from tests.conftest import TEST_POLICY, Api
from tests.governance.admin.scenarios import pending_approval, personal_pending_approval
from tests.governance.broker.support import ECHO_TOOLS

pytestmark = pytest.mark.django_db

GLOBEX_ONLY_POLICY = TEST_POLICY.replace("name: default", "name: globex-only")


@dataclass
class Globex:
    run: Run
    approval: Approval
    shared: Connection
    personal: Connection
    binding: FrozenBinding
    reservation_id: int


@pytest.fixture
def globex(other_org) -> Globex:
    """globex's objects: a supervised run with a pending approval, a pending consent for
    gina's personal connection, an open budget reservation, a policy acme has no namesake of."""
    policy_save(org=other_org, text=GLOBEX_ONLY_POLICY, author=None)
    user_create(username="gina", org=other_org, role=Role.APPROVER, password="pw-gina-123")
    operator = Actor(kind=ActorKind.OPERATOR, org_id=other_org.pk)
    shared = connection_create(
        org=other_org,
        actor=operator,
        slug="crm",
        kind="shared",
        transport="streamable-http",
        url="http://127.0.0.1:9/mcp",
        credential={"header": "Authorization", "value": "Bearer globex"},
    )
    personal = connection_create(
        org=other_org,
        actor=operator,
        slug="mine",
        kind="personal",
        owner="gina",
        transport="streamable-http",
        url="http://127.0.0.1:9/mcp",
    )
    photograph_store(connection=personal, tools=[dict(t) for t in ECHO_TOOLS])
    run = run_create(
        org=other_org,
        agent="globex-bot",
        policy_name="default",
        autonomy="supervised",
        source={"kind": "manual"},
        budget_tokens=100_000,
        bundles=["sandbox-basic"],
        connections=["mine"],
        invoked_by="gina",
    ).run
    answer = permission_request(
        run=run, session_id="s", tool_call_id="c", tool="send_email", arguments={"to": "g@x.io"}
    )
    reservation = reservation_create(
        run=run, request_key="r", max_output_tokens=10, input_tokens_upper_bound=10
    ).reservation
    return Globex(
        run=run,
        approval=answer.approval,
        shared=shared,
        personal=personal,
        binding=run.bindings.get(),
        reservation_id=reservation.pk,
    )


def requests_at(run, approval, connection, binding, reservation, policy) -> list[tuple]:
    """One request per endpoint that names an object, aimed at the objects given."""
    gate = {"session_id": "s", "tool_call_id": "c2", "tool": "read_file", "arguments": {}}
    call = {"session_id": "s", "tool_call_id": "c3", "arguments": {}}
    credential = {"credential": {"header": "Authorization", "value": "Bearer mine-now"}}
    return [
        ("get", f"/v1/runs/{run}", None),
        ("post", f"/v1/runs/{run}/finish", {}),
        ("post", f"/v1/runs/{run}/permission", gate),
        (
            "post",
            f"/v1/runs/{run}/budget/reservations",
            {"request_key": "q", "max_output_tokens": 1, "input_tokens_upper_bound": 1},
        ),
        (
            "post",
            f"/v1/runs/{run}/budget/reservations/{reservation}/settle",
            {"input_tokens": 1, "output_tokens": 1},
        ),
        ("get", f"/v1/runs/{run}/events", None),
        ("get", f"/v1/runs/{run}/events/stream", None),
        ("get", f"/v1/runs/{run}/secrets?tool=read_file&session_id=s&tool_call_id=c", None),
        ("post", f"/v1/runs/{run}/tools/mine.lookup/call", call),
        ("get", f"/v1/connections/{connection}", None),
        ("post", f"/v1/connections/{connection}/reconnect", credential),
        ("post", f"/v1/connections/{connection}/revoke", {}),
        ("post", f"/v1/connections/{connection}/tools/refresh", {}),
        ("post", f"/v1/approvals/{approval}/decision", {"decision": "approve"}),
        ("post", f"/v1/bindings/{binding}/consent", {"decision": "approve"}),
        ("get", f"/v1/policies/{policy}", None),
        # PUT is left out: it saves a policy of the caller's own organization, by that name.
        ("post", f"/v1/policies/{policy}/evaluate", {"call": "run_command:ls"}),
        ("post", f"/v1/policies/{policy}/replay", {"draft": GLOBEX_ONLY_POLICY}),
        ("get", f"/v1/ledger/proofs/inclusion?run={run}&seq=1", None),
        ("get", "/v1/ledger/checkpoint?org=globex", None),
        ("get", "/v1/ledger/public-key?org=globex", None),
        ("get", "/v1/ledger/keys?org=globex", None),
        ("get", "/v1/ledger/checkpoints?org=globex", None),
        ("get", "/v1/ledger/proofs/consistency?org=globex&first=1", None),
    ]


def globex_requests(globex: Globex) -> list[tuple]:
    return requests_at(
        globex.run.pk,
        globex.approval.pk,
        globex.shared.pk,
        globex.binding.pk,
        globex.reservation_id,
        "globex-only",
    )


def nobodys_requests() -> list[tuple]:
    return requests_at(uuid4(), 987654, 987654, 987654, 987654, "nobodys-policy")


def send(api: Api, method: str, path: str, body):
    api.client.raise_request_exception = False
    if method == "get":
        response = api.client.get(path)
    else:
        response = getattr(api.client, method)(path, body, format="json")
    if getattr(response, "streaming", False):
        return response.status_code, b"".join(response.streaming_content)
    return response.status_code, response.content


def what_globex_has(globex: Globex) -> tuple:
    org = globex.run.org
    connections = Connection.objects.filter(org=org).order_by("slug")
    return (
        Run.objects.get(pk=globex.run.pk).status,
        Approval.objects.get(pk=globex.approval.pk).status,
        tuple(connections.values_list("slug", "status", "authorization_generation")),
        FrozenBinding.objects.get(pk=globex.binding.pk).consent,
        Event.objects.filter(run__org=org).count(),
        org.policies.get(name="globex-only").current_version_id,
    )


def acme_run_create(org):
    return run_create(
        org=org,
        agent="acme-bot",
        policy_name="default",
        autonomy="autonomous",
        source={"kind": "manual"},
        budget_tokens=1000,
        bundles=["sandbox-basic"],
        connections=[],
    )


@pytest.fixture
def acme_callers(org, approver, admin_user, member):
    """Each credential an acme attacker may hold, the run token included."""
    acme_run = acme_run_create(org)
    return {
        "operator key": lambda: Api(api_key_create(org=org, name="ci").plaintext),
        "run token": lambda: Api(acme_run.session_token),
        "member's key": lambda: Api(api_key_create(org=org, name="m", user=member).plaintext),
        "approver's key": lambda: Api(api_key_create(org=org, name="a", user=approver).plaintext),
        "admin's portal session": lambda: Api(user=admin_user),
        "nobody": lambda: Api(),
    }


CALLERS = (
    "operator key",
    "run token",
    "member's key",
    "approver's key",
    "admin's portal session",
    "nobody",
)


@pytest.mark.parametrize("caller", CALLERS)
def test_another_orgs_ids_get_what_made_up_ids_get_and_change_nothing(globex, acme_callers, caller):
    before = what_globex_has(globex)
    api = acme_callers[caller]()
    for aimed, made_up in zip(globex_requests(globex), nobodys_requests(), strict=True):
        status, body = send(api, *aimed)
        assert status in (401, 403, 404), (caller, aimed[:2], status, body[:300])
        assert b"globex-bot" not in body
        # A refusal says nothing that a made-up id's refusal does not.
        made_up_status, made_up_body = send(api, *made_up)
        assert status == made_up_status, (caller, aimed[:2], status, made_up_status)
        if status != 404:  # a 404's detail names the id asked for, as given
            assert body == made_up_body, (caller, aimed[:2], body[:300])
    assert what_globex_has(globex) == before
    assert Approval.objects.get(pk=globex.approval.pk).status == ApprovalStatus.PENDING
    assert FrozenBinding.objects.get(pk=globex.binding.pk).consent == BindingConsent.PENDING
    assert Run.objects.get(pk=globex.run.pk).status == RunStatus.ACTIVE


def test_every_endpoint_that_names_an_object_is_aimed_at_another_org(client):
    schema = client.get("/v1/schema.json").json()
    named = {
        path.split("?")[0]
        for path in schema["paths"]
        if "{" in path or path.startswith("/v1/ledger/")
    }
    aimed = {
        path.split("?")[0]
        for _, path, _ in requests_at(
            "{run_id}",
            "{approval_id}",
            "{connection_id}",
            "{binding_id}",
            "{reservation_id}",
            "{name}",
        )
    }
    aimed = {p.replace("mine.lookup", "{tool}") for p in aimed}
    assert named <= aimed, named - aimed


PORTAL_FILTERS = (
    "/admin/governance/run/?status=%00",
    "/admin/governance/run/?trust_tier__exact=%00",
    "/admin/governance/approval/?status=%00",
    "/admin/governance/connection/?kind=%00",
    "/admin/governance/toolcall/?decision=%00",
    "/admin/governance/membership/?role=%00",
    "/admin/governance/budgetreservation/?status=%00",
    "/admin/ledger/event/?type=%00",
    "/admin/django_q/failure/%00/change/",
)


@pytest.mark.parametrize("address", PORTAL_FILTERS)
def test_a_nul_in_a_portal_address_is_a_400_not_a_500(admin_user, address):
    """PostgreSQL raised on the filter value: a 500 for any signed-in admin."""
    status, body = send(Api(user=admin_user), "get", address, None)
    assert status == 400, body[:300]
    assert b"NUL" in body


def test_a_member_filtering_their_runs_with_a_nul_gets_a_400(member):
    status, _ = send(Api(user=member), "get", "/admin/governance/run/?status=%00", None)
    assert status == 400


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("get", "/v1/policies/default%00", None),
        ("post", "/v1/policies/default%00/evaluate", {"call": "run_command:ls"}),
        ("post", "/v1/policies/default%00/replay", {"draft": TEST_POLICY}),
        ("get", "/v1/approvals?status=pending&x=%00", None),
    ],
)
def test_a_nul_in_an_api_address_is_a_400_in_the_error_shape(operator_key, method, path, body):
    status, answer = send(Api(operator_key), method, path, body)
    assert status == 400, answer[:300]
    assert b'"error":"invalid"' in answer.replace(b" ", b"")


@pytest.mark.parametrize("selected", ["abc", "1\x00", "\x00"])
def test_a_key_revoke_action_on_ids_that_are_not_ids_is_a_400_and_revokes_nothing(
    org, admin_user, selected
):
    """Django's action filtered the list by the posted ids as they came: a ValueError (500)."""
    key = api_key_create(org=org, name="ci").key
    page = Api(user=admin_user).client
    page.raise_request_exception = False
    response = page.post(
        "/admin/governance/apikey/",
        {"action": "revoke_keys", "index": "0", "_selected_action": [str(key.pk), selected]},
    )
    assert response.status_code == 400
    key.refresh_from_db()
    assert key.revoked_at is None


def test_a_key_revoke_action_on_a_real_key_still_revokes_it(org, admin_user):
    key = api_key_create(org=org, name="ci").key
    response = Api(user=admin_user).client.post(
        "/admin/governance/apikey/",
        {"action": "revoke_keys", "index": "0", "_selected_action": [str(key.pk)]},
    )
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_another_orgs_key_in_a_revoke_action_is_left_alone(org, other_org, admin_user):
    theirs = api_key_create(org=other_org, name="ci").key
    Api(user=admin_user).client.post(
        "/admin/governance/apikey/",
        {"action": "revoke_keys", "index": "0", "_selected_action": [str(theirs.pk)]},
    )
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


@pytest.mark.parametrize(
    "dates",
    [
        "created_at__year=99999999999999",
        "created_at__year=9999",
        "created_at__year=9999&created_at__month=12",
        "created_at__year=9999&created_at__month=12&created_at__day=31",
    ],
)
@pytest.mark.parametrize(
    "listing", ["governance/run", "governance/approval", "governance/toolcall"]
)
def test_a_date_past_what_python_holds_is_a_bad_filter_not_a_500(auditor, listing, dates):
    page = Api(user=auditor).client
    page.raise_request_exception = False
    response = page.get(f"/admin/{listing}/?{dates}")
    # What Django answers any filter it cannot apply: back to the list, flagged `e=1`.
    assert response.status_code == 302
    assert response.headers["Location"].endswith("?e=1")


def test_the_ledgers_date_hierarchy_refuses_the_same_years(auditor):
    page = Api(user=auditor).client
    page.raise_request_exception = False
    assert page.get("/admin/ledger/event/?at__year=99999999999999").status_code == 302


def test_every_date_hierarchy_of_the_portal_refuses_the_same_years(django_user_model):
    """Other apps' lists too (django-axes' sign-in attempts, django-q2's tasks), which only a
    superuser sees: each with a date hierarchy, past 9999, is the bad-filter redirect."""
    page = Api(user=django_user_model.objects.create_superuser("root", password="x" * 16)).client
    page.raise_request_exception = False
    lists = [
        (model, model_admin.date_hierarchy)
        for model, model_admin in admin.site._registry.items()
        if model_admin.date_hierarchy
    ]
    assert {model._meta.app_label for model, _ in lists} >= {"axes", "governance", "ledger"}
    for model, dates in lists:
        listing = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        response = page.get(f"{listing}?{dates}__year=99999999999999")
        assert (response.status_code, response.headers.get("Location")) == (302, f"{listing}?e=1")


def test_a_year_the_list_can_show_still_filters_it(org, auditor):
    acme_run_create(org)
    page = Api(user=auditor).client
    this_year = Run.objects.get().created_at.year
    assert (
        "acme-bot"
        in page.get(f"/admin/governance/run/?created_at__year={this_year}").content.decode()
    )
    assert (
        "acme-bot" not in page.get("/admin/governance/run/?created_at__year=2001").content.decode()
    )


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_a_member_aiming_at_another_persons_approval_gets_what_a_made_up_id_gets(
    org, member, decision
):
    """A member sees only their own runs: a decision posted on another member's pending
    call (its id guessed: ids count up) must not tell that the call exists."""
    user_create(username="bob", org=org, role=Role.MEMBER, password="pw-bob-123")
    approval = personal_pending_approval(org, owner="bob")
    mo = Api(api_key_create(org=org, user=member, name="mo").plaintext)

    theirs = mo.post(f"/v1/approvals/{approval.pk}/decision", {"decision": decision})
    made_up = mo.post(f"/v1/approvals/{approval.pk + 1000}/decision", {"decision": decision})

    assert (theirs.status_code, theirs.json()) == (made_up.status_code, made_up.json())
    assert theirs.status_code == 404
    approval.refresh_from_db()
    assert approval.status == "pending"
    assert not Event.objects.filter(run_id=approval.run_id, type="approval.decided").exists()


def test_an_auditor_who_reads_the_run_is_still_told_they_may_not_decide(org, auditor):
    approval = pending_approval(org)
    audrey = Api(api_key_create(org=org, user=auditor, name="audrey").plaintext)

    response = audrey.post(f"/v1/approvals/{approval.pk}/decision", {"decision": "approve"})

    assert response.status_code == 403
    approval.refresh_from_db()
    assert approval.status == "pending"


@pytest.mark.parametrize("caller", CALLERS)
def test_the_connection_list_shows_each_caller_what_it_may_read_and_nothing_of_globex(
    org, globex, acme_callers, caller, member
):
    operator = Actor(kind=ActorKind.OPERATOR, org_id=org.pk)
    for slug, kind, owner in (("tracker", "shared", None), ("mos", "personal", "mo")):
        connection_create(
            org=org,
            actor=operator,
            slug=slug,
            kind=kind,
            owner=owner,
            transport="streamable-http",
            url="http://127.0.0.1:9/mcp",
            credential={"header": "Authorization", "value": "Bearer canary-list-secret"},
        )

    answer = acme_callers[caller]().get("/v1/connections")

    expected = {
        "operator key": (200, ["mos", "tracker"]),
        "approver's key": (200, ["mos", "tracker"]),  # approvers read every connection
        "admin's portal session": (200, ["mos", "tracker"]),
        "member's key": (200, ["mos"]),  # a member: their own personal connection only
        "run token": (403, None),
        "nobody": (401, None),
    }[caller]
    assert answer.status_code == expected[0], answer.content
    if expected[1] is not None:
        assert [c["slug"] for c in answer.json()["connections"]] == expected[1]
    assert b"canary-list-secret" not in answer.content and b"crm" not in answer.content
