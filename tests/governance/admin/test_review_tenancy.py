"""The portal from the attacker's side: a member, approver, auditor or admin of one
organization, signed in, trying to read another organization's rows, read columns no page
shows, or act as another person. Each test makes the attempt, then checks it was refused and
nothing leaked or changed."""

import re

import pytest
from django.contrib import admin
from django.urls import reverse

from governance.models import (
    ApiKey,
    Approval,
    Connection,
    NotificationChannel,
    Organization,
    Role,
)
from governance.services.agent_secrets import agent_secret_set
from governance.services.channels import channel_create
from governance.services.orgs import api_key_create, user_create
from governance.services.policies import policy_save
from ledger.models import AuditSink
from ledger.sinks import sink_create
from tests.conftest import TEST_POLICY, Api
from tests.governance.admin.scenarios import (
    personal_connection,
    personal_pending_approval,
    sandbox_run,
    shared_connection,
)

pytestmark = pytest.mark.django_db

OTHER = re.compile(r"globex|Globex Corp|gus-of-globex|globex-policy", re.IGNORECASE)
LEGACY_URL = "https://siem-user:LEGACY-PW-CANARY@siem.example.com/in"


@pytest.fixture
def globex(other_org):
    """Another tenant, with something of everything under names that give it away."""
    Organization.objects.filter(pk=other_org.pk).update(name="Globex Corp")
    gus = user_create(username="gus-of-globex", org=other_org, role=Role.ADMIN, password="pw-g1")
    policy_save(
        org=other_org,
        text=TEST_POLICY.replace("name: default", "name: globex-policy"),
        author=gus,
    )
    sandbox_run(other_org, agent="globex-agent", invoked_by=gus)
    shared_connection(other_org, slug="globex-crm")
    personal_connection(other_org, "gus-of-globex", slug="globex-mine")
    api_key_create(org=other_org, name="globex-key")
    channel_create(
        org=other_org, name="globex-hook", kind="webhook", url="https://globex.test/h", secret="s"
    )
    agent_secret_set(org=other_org, name="GLOBEX_TOKEN", value="v")
    sink_create(org=other_org, name="globex-sink", kind="jsonl", url="https://globex.test/s")
    return other_org


def changelists() -> list[str]:
    return [
        reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        for model in admin.site._registry
    ]


@pytest.mark.parametrize("persona", ["admin_user", "approver", "auditor", "member"])
def test_no_list_names_another_organization_in_its_filters(
    org, world, globex, request, login, persona
):
    client = login(request.getfixturevalue(persona))
    shown = 0
    for url in changelists():
        response = client.get(url)
        if response.status_code != 200:
            continue
        shown += 1
        page = response.content.decode()
        assert not OTHER.search(page), (url, OTHER.search(page).group(0))
    assert shown


@pytest.mark.parametrize("persona", ["admin_user", "auditor", "member"])
def test_no_page_of_another_organizations_object_opens_or_names_it(
    org, globex, request, login, persona
):
    client = login(request.getfixturevalue(persona))
    tried = 0
    for model in admin.site._registry:
        info = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        org_path = getattr(admin.site._registry[model], "org_path", None)
        if org_path is None:
            continue
        theirs = model._base_manager.filter(**{org_path: globex.pk}).values_list("pk", flat=True)
        for pk in theirs:
            for view in ("change", "history", "delete"):
                response = client.get(reverse(f"{info}_{view}", args=[pk]))
                tried += 1
                assert response.status_code in (302, 403, 404), (info, view)
                assert not OTHER.search(response.content.decode()), (info, view)
                assert not OTHER.search(response.get("Location", "")), (info, view)
    assert tried > 30


def test_the_filters_still_offer_ones_own_organizations_and_every_link_in_them_works(
    org, world, globex, superuser, login
):
    client = login(superuser)
    followed = 0
    for url in changelists():
        page = client.get(url).content.decode()
        for query in set(re.findall(r'href="(\?[^"]+)"', page)):
            response = client.get(url + query.replace("&amp;", "&"))
            assert response.status_code == 200, (url, query)
            assert "?e=1" not in response.get("Location", "")
            followed += 1
    assert followed > 50
    runs = client.get(reverse("admin:governance_run_changelist")).content.decode()
    assert "globex" in runs  # a superuser is an admin of every organization


@pytest.mark.parametrize(
    "query",
    [
        "key_hash__startswith={prefix}",
        "key_hash={hash}",
        "name__startswith=ci",  # a column the page shows: still not a filter it offers
    ],
)
def test_a_filter_on_a_column_no_page_shows_is_refused(org, auditor, login, query):
    key = api_key_create(org=org, name="ci").key
    client = login(auditor)
    url = reverse("admin:governance_apikey_changelist")
    response = client.get(f"{url}?{query.format(prefix=key.key_hash[:3], hash=key.key_hash)}")
    assert response.status_code == 400
    assert key.key_hash not in response.content.decode()


@pytest.mark.parametrize(
    ("model", "lookup"),
    [
        ("governance_connection", "credential_sealed__startswith"),
        ("governance_agentsecret", "value_sealed__startswith"),
        ("governance_notificationchannel", "secret_sealed__startswith"),
        ("governance_run", "session_token_hash__startswith"),
        ("ledger_auditsink", "token_sealed__startswith"),
        ("ledger_auditsink", "url__contains"),
        ("governance_membership", "user__password__startswith"),
    ],
)
def test_no_sealed_or_hashed_column_can_be_read_out_through_the_row_count(
    org, world, auditor, login, model, lookup
):
    response = login(auditor).get(f"{reverse(f'admin:{model}_changelist')}?{lookup}=a")
    assert response.status_code == 400


def test_an_org_admin_cannot_issue_a_members_personal_key_and_decide_for_them(
    org, admin_user, member, login
):
    approval = personal_pending_approval(org, "mo")
    response = login(admin_user).post(
        reverse("admin:governance_apikey_add"),
        {"org": org.pk, "name": "mo-for-me", "username": "mo"},
    )
    page = response.content.decode()
    assert response.status_code == 400
    assert "personal key" in page
    assert not ApiKey.objects.filter(user=member).exists()
    for key in re.findall(r"fbx_[A-Za-z0-9_-]+", page):  # had one been issued anyway
        Api(key).post(f"/v1/approvals/{approval.pk}/decision", {"decision": "approve"})
    assert Approval.objects.get(pk=approval.pk).status == "pending"


def test_a_superuser_cannot_issue_someone_elses_personal_key_either(org, superuser, member, login):
    response = login(superuser).post(
        reverse("admin:governance_apikey_add"), {"org": org.pk, "name": "x", "username": "mo"}
    )
    assert response.status_code == 400
    assert not ApiKey.objects.filter(user=member).exists()


def test_an_admin_still_issues_operator_keys_and_their_own_personal_key(org, admin_user, login):
    client = login(admin_user)
    add = reverse("admin:governance_apikey_add")
    operator = client.post(add, {"org": org.pk, "name": "deploy"})
    mine = client.post(add, {"org": org.pk, "name": "laptop", "username": "ada"})
    assert operator.status_code == mine.status_code == 200
    assert "fbx_" in operator.content.decode() and "fbx_" in mine.content.decode()
    assert ApiKey.objects.filter(org=org, user=None, name="deploy").exists()
    assert ApiKey.objects.filter(org=org, user=admin_user, name="laptop").exists()


@pytest.fixture
def legacy_sink(org):
    """A sink stored before URLs with a user and password were refused."""
    return AuditSink.objects.create(org=org, name="legacy", kind="jsonl", url=LEGACY_URL)


@pytest.mark.parametrize("persona", ["admin_user", "approver", "auditor", "superuser"])
def test_a_legacy_sinks_password_is_masked_on_the_list_and_the_change_page(
    legacy_sink, request, login, persona
):
    client = login(request.getfixturevalue(persona))
    pages = [
        client.get(reverse("admin:ledger_auditsink_changelist")),
        client.get(reverse("admin:ledger_auditsink_change", args=[legacy_sink.pk])),
    ]
    for response in pages:
        page = response.content.decode()
        assert response.status_code == 200
        assert "LEGACY-PW-CANARY" not in page and "siem-user" not in page
        assert "https://***@siem.example.com/in" in page


def test_saving_a_legacy_sink_as_shown_is_refused_and_a_clean_url_is_taken(
    legacy_sink, admin_user, login
):
    client = login(admin_user)
    change = reverse("admin:ledger_auditsink_change", args=[legacy_sink.pk])
    form = {"token": "", "is_active": "on", "max_backlog": 1000}
    again = client.post(change, {**form, "url": "https://***@siem.example.com/in"})
    assert again.status_code == 200
    assert "cannot carry a user or password" in again.content.decode()
    assert "LEGACY-PW-CANARY" not in again.content.decode()
    assert AuditSink.objects.get(pk=legacy_sink.pk).url == LEGACY_URL
    other = client.post(change, {**form, "url": "https://u:NEW-PW@siem.example.com/in"})
    assert "cannot carry a user or password" in other.content.decode()
    assert AuditSink.objects.get(pk=legacy_sink.pk).url == LEGACY_URL
    fixed = client.post(change, {**form, "url": "https://siem.example.com/in", "token": "T-1"})
    assert fixed.status_code == 302
    assert AuditSink.objects.get(pk=legacy_sink.pk).url == "https://siem.example.com/in"


def test_a_webhook_url_with_a_password_is_refused_and_an_old_one_is_masked(
    org, admin_user, auditor, login
):
    add = reverse("admin:governance_notificationchannel_add")
    form = {"org": org.pk, "name": "hook", "kind": "webhook", "secret": "s", "is_active": "on"}
    refused = login(admin_user).post(add, {**form, "url": "https://u:HOOK-PW@hooks.test/x"})
    assert refused.status_code == 200
    assert "cannot carry a user or password" in refused.content.decode()
    assert not NotificationChannel.objects.exists()
    old = channel_create(
        org=org, name="old", kind="webhook", url="https://hooks.test/x", secret="s"
    )
    # Stored before such URLs were refused.
    NotificationChannel.objects.filter(pk=old.pk).update(url="https://u:HOOK-PW@hooks.test/x")
    for person in (admin_user, auditor):
        client = login(person)
        for url in (
            reverse("admin:governance_notificationchannel_changelist"),
            reverse("admin:governance_notificationchannel_change", args=[old.pk]),
        ):
            page = client.get(url).content.decode()
            assert "HOOK-PW" not in page and "https://***@hooks.test/x" in page, (person, url)
        searched = client.get(
            reverse("admin:governance_notificationchannel_changelist") + "?q=HOOK-PW"
        )
        assert "0 notification channels" in searched.content.decode()


def test_a_connection_url_with_a_password_is_refused_and_an_old_one_is_masked(
    org, member, auditor, admin_user, login
):
    add = reverse("admin:governance_connection_add")
    form = {"org": org.pk, "slug": "mine", "kind": "personal", "owner": "mo"}
    form |= {"transport": "streamable-http", "url": "http://mo:MO-PW@127.0.0.1:9/mcp"}
    refused = login(member).post(add, form)
    assert refused.status_code == 400
    assert "cannot carry a user or password" in refused.content.decode()
    assert not Connection.objects.exists()
    old = personal_connection(org, "mo", slug="mine")
    Connection.objects.filter(pk=old.pk).update(url="http://mo:MO-PW@127.0.0.1:9/mcp")
    for person in (member, auditor, admin_user):
        client = login(person)
        page = client.get(reverse("admin:governance_connection_change", args=[old.pk]))
        assert "MO-PW" not in page.content.decode()
        assert "http://***@127.0.0.1:9/mcp" in page.content.decode()
        searched = client.get(reverse("admin:governance_connection_changelist") + "?q=MO-PW")
        assert "0 connections" in searched.content.decode()
