"""Roles are enforced on the server: auditors change nothing, the ledger and runs are
read-only for everyone, members see only their own, and no org sees another's rows."""

import pytest
from django.urls import reverse

from governance.models import (
    ApiKey,
    CapabilityBundle,
    Connection,
    FrozenTool,
    Membership,
    NotificationChannel,
    Policy,
    ToolCall,
)
from governance.services.orgs import user_create
from ledger.models import Event
from tests.governance.admin.scenarios import (
    ask,
)

pytestmark = pytest.mark.django_db


def objects_of(org, world) -> dict[str, object]:
    return {
        "governance_policy": Policy.objects.get(org=org),
        "governance_connection": Connection.objects.get(org=org, slug="crm"),
        "governance_capabilitybundle": CapabilityBundle.objects.get(org=org),
        "governance_apikey": ApiKey.objects.get(org=org),
        "governance_membership": Membership.objects.filter(org=org).first(),
        "governance_notificationchannel": NotificationChannel.objects.get(org=org),
        "governance_run": world["run"],
        "governance_toolcall": ToolCall.objects.filter(run=world["run"]).first(),
        "governance_frozentool": FrozenTool.objects.filter(run=world["run"]).first(),
        "governance_approval": world["approval"],
        "ledger_event": Event.objects.filter(run=world["run"]).first(),
    }


def snapshot(org) -> dict:
    return {
        "policy_versions": Policy.objects.get(org=org).versions.count(),
        "events": list(Event.objects.values_list("pk", "hash")),
        "connections": list(
            Connection.objects.values_list("pk", "status", "authorization_generation")
        ),
        "keys": list(ApiKey.objects.values_list("pk", "revoked_at")),
        "memberships": list(Membership.objects.values_list("pk", "role", "is_active")),
        "bundles": list(CapabilityBundle.objects.values_list("pk", "content")),
    }


def test_an_auditor_reads_everything_and_every_change_url_answers_403(org, world, auditor, login):
    client = login(auditor)
    before = snapshot(org)
    for name, obj in objects_of(org, world).items():
        app, model = name.split("_", 1)
        assert client.get(reverse(f"admin:{name}_changelist")).status_code == 200, name
        change = reverse(f"admin:{name}_change", args=[obj.pk])
        assert client.get(change).status_code in (200, 302), name
        assert client.get(reverse(f"admin:{name}_add")).status_code == 403, name
        assert client.post(reverse(f"admin:{name}_add"), {"name": "x"}).status_code == 403, name
        forged = {"role": "admin", "is_active": "on", "content": "name: x", "do": "save"}
        assert client.post(change, forged).status_code == 403, name
        delete = reverse(f"admin:{name}_delete", args=[obj.pk])
        assert client.get(delete).status_code == 403, name
        assert client.post(delete, {"post": "yes"}).status_code == 403, name
    assert snapshot(org) == before


def test_an_auditor_cannot_act_on_a_connection_or_revoke_a_key(org, world, auditor, login):
    client = login(auditor)
    before = snapshot(org)
    crm = Connection.objects.get(slug="crm")
    for action in ("refresh", "revoke", "reconnect"):
        url = reverse("admin:governance_connection_action", args=[crm.pk, action])
        response = client.post(
            url, {"credential_placement": "header", "credential_name": "X", "credential_value": "v"}
        )
        assert response.status_code == 403, action
    key = ApiKey.objects.get(org=org)
    response = client.post(
        reverse("admin:governance_apikey_changelist"),
        {"action": "revoke_keys", "_selected_action": [key.pk]},
    )
    assert response.status_code in (200, 302)
    assert snapshot(org) == before


READ_ONLY = [
    "governance_run",
    "governance_toolcall",
    "governance_frozentool",
    "governance_approval",
    "ledger_event",
]


@pytest.mark.parametrize("name", READ_ONLY)
def test_ledger_and_run_screens_refuse_changes_even_for_a_superuser(
    org, world, superuser, login, name
):
    client = login(superuser)
    obj = objects_of(org, world)[name]
    before = snapshot(org)
    assert client.get(reverse(f"admin:{name}_add")).status_code == 403
    assert client.post(reverse(f"admin:{name}_change", args=[obj.pk]), {}).status_code == 403
    assert client.get(reverse(f"admin:{name}_delete", args=[obj.pk])).status_code == 403
    assert (
        client.post(reverse(f"admin:{name}_delete", args=[obj.pk]), {"post": "yes"}).status_code
        == 403
    )
    changelist = client.get(reverse(f"admin:{name}_changelist")).content.decode()
    assert 'value="delete_selected"' not in changelist
    assert snapshot(org) == before


def test_a_member_sees_only_their_own_personal_connections(org, world, member, login):
    client = login(member)
    listing = client.get(reverse("admin:governance_connection_changelist")).content.decode()
    assert ">mine<" in listing
    assert ">alices<" not in listing and ">crm<" not in listing
    others = Connection.objects.exclude(slug="mine")
    for connection in others:
        response = client.get(reverse("admin:governance_connection_change", args=[connection.pk]))
        assert response.status_code == 302  # "doesn't exist": not in the member's queryset
    mine = Connection.objects.get(slug="mine")
    page = client.get(reverse("admin:governance_connection_change", args=[mine.pk]))
    assert page.status_code == 200


def test_a_member_sees_only_approvals_that_are_theirs(org, world, member, login):
    from tests.governance.admin.scenarios import owner_actor
    from tests.governance.admin.scenarios import sandbox_run as run_for

    run, _ = run_for(org, invoked_by="mo", connections=["mine"], created_by=owner_actor("mo"))
    mine = ask(run, "mine.update", {"id": "1"}).approval
    client = login(member)
    listing = client.get(reverse("admin:governance_approval_changelist")).content.decode()
    assert reverse("admin:inbox-approval", args=[mine.pk]) in listing
    assert reverse("admin:inbox-approval", args=[world["approval"].pk]) not in listing
    assert (
        client.get(reverse("admin:inbox-approval", args=[world["approval"].pk])).status_code == 404
    )
    for name in ("policy", "capabilitybundle", "notificationchannel", "membership"):
        assert client.get(reverse(f"admin:governance_{name}_changelist")).status_code == 403, name
    events = client.get(reverse("admin:ledger_event_changelist")).content.decode()
    assert str(world["run"].pk)[:8] not in events  # a run the member did not invoke
    keys = client.get(reverse("admin:governance_apikey_changelist")).content.decode()
    assert ">ci<" not in keys  # the org's operator key is not a member's to see


def test_an_admin_of_another_org_sees_none_of_these_rows(org, world, other_org, other_admin, login):
    client = login(other_admin)
    for name, obj in objects_of(org, world).items():
        response = client.get(reverse(f"admin:{name}_change", args=[obj.pk]))
        assert response.status_code in (302, 404), name
    listing = client.get(reverse("admin:governance_connection_changelist")).content.decode()
    assert ">crm<" not in listing
    response = client.get(reverse("admin:governance_run_change", args=[world["run"].pk]))
    assert response.status_code == 302


def test_a_superuser_is_an_admin_of_every_org(org, other_org, world, superuser, login):
    client = login(superuser)
    policy = Policy.objects.get(org=other_org)
    page = client.get(reverse("admin:governance_policy_change", args=[policy.pk])).content.decode()
    assert 'id="save-policy"' in page
    inbox = client.get(reverse("admin:inbox")).content.decode()
    assert f'id="approval-{world["approval"].pk}"' in inbox


def test_only_a_superuser_creates_organizations(org, admin_user, superuser, login):
    from governance.models import Organization

    url = reverse("admin:governance_organization_add")
    assert login(admin_user).post(url, {"slug": "initech", "name": "Initech"}).status_code == 403
    assert login(superuser).post(url, {"slug": "initech", "name": "Initech"}).status_code == 302
    assert Organization.objects.filter(slug="initech").exists()


def test_an_org_admin_cannot_set_the_password_of_someone_elses_account(
    org, other_org, other_admin, login
):
    victim = user_create(username="vic", org=org, role="member", password="pw-vic-123")
    client = login(other_admin)
    response = client.post(
        reverse("admin:governance_membership_add"),
        {"org": other_org.pk, "username": "vic", "password": "taken-over-1", "role": "member"},
    )
    assert response.status_code == 200
    assert "already has an account" in response.content.decode()
    victim.refresh_from_db()
    assert victim.check_password("pw-vic-123")
    assert not Membership.objects.filter(org=other_org, user=victim).exists()
