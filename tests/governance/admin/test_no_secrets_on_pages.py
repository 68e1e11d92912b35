"""A planted canary credential, agent secret and webhook secret never reach an admin page,
neither as plaintext nor as the ciphertext the vault sealed them into."""

import pytest
from django.urls import reverse

from governance.models import AgentSecret, ApiKey, Connection, NotificationChannel
from governance.services.agent_secrets import agent_secret_set
from governance.services.channels import channel_create
from governance.services.orgs import api_key_create
from tests.governance.admin.scenarios import personal_connection, shared_connection

pytestmark = pytest.mark.django_db

CANARY = "Bearer canary-5e1f-credential-never-shown"
SECRET = "agent-canary-77d0"
HOOK = "hook-canary-9a3c"


@pytest.fixture
def planted(org, member):
    shared_connection(org, slug="crm", credential=CANARY)
    personal_connection(org, "mo", slug="mine", credential=CANARY + "-mine")
    agent_secret_set(org=org, name="JIRA_TOKEN", value=SECRET)
    channel_create(org=org, name="hook", kind="webhook", url="https://example.com/h", secret=HOOK)
    issued = api_key_create(org=org, name="ci")
    return issued


def forbidden_strings(issued) -> list[str]:
    sealed = list(Connection.objects.values_list("credential_sealed", flat=True))
    sealed += list(AgentSecret.objects.values_list("value_sealed", flat=True))
    sealed += list(NotificationChannel.objects.values_list("secret_sealed", flat=True))
    assert all(sealed)
    hashes = list(ApiKey.objects.values_list("key_hash", flat=True))
    return [CANARY.split(" ")[1], SECRET, HOOK, issued.plaintext, *sealed, *hashes]


def pages(org) -> list[str]:
    urls = [reverse("admin:index"), reverse("admin:inbox")]
    for name, model in (
        ("governance_connection", Connection),
        ("governance_agentsecret", AgentSecret),
        ("governance_notificationchannel", NotificationChannel),
        ("governance_apikey", ApiKey),
    ):
        urls.append(reverse(f"admin:{name}_changelist"))
        urls.append(reverse(f"admin:{name}_changelist") + "?q=canary")
        urls.append(reverse(f"admin:{name}_add"))
        for pk in model.objects.values_list("pk", flat=True):
            urls.append(reverse(f"admin:{name}_change", args=[pk]))
            urls.append(reverse(f"admin:{name}_history", args=[pk]))
    return urls


@pytest.mark.parametrize("persona", ["admin_user", "auditor", "member", "superuser"])
def test_no_credential_or_ciphertext_on_any_admin_page(org, planted, request, login, persona):
    client = login(request.getfixturevalue(persona))
    forbidden = forbidden_strings(planted)
    seen = 0
    for url in pages(org):
        response = client.get(url)
        body = response.content.decode()
        leaked = [s[:12] for s in forbidden if s in body]
        assert not leaked, (url, leaked)
        seen += response.status_code == 200
    assert seen >= 4


def test_a_reconnect_whose_form_fails_does_not_echo_the_new_credential(org, planted, member, login):
    mine = Connection.objects.get(slug="mine")
    url = reverse("admin:governance_connection_action", args=[mine.pk, "reconnect"])
    response = login(member).post(
        url,
        {
            "credential_placement": "header",
            "credential_name": "bad header!",
            "credential_value": "new-canary-1",
        },
    )
    assert response.status_code == 400
    assert "new-canary-1" not in response.content.decode()
    mine.refresh_from_db()
    assert mine.authorization_generation == 1


def test_the_owner_reconnects_and_the_generation_moves(org, planted, member, login):
    mine = Connection.objects.get(slug="mine")
    url = reverse("admin:governance_connection_action", args=[mine.pk, "reconnect"])
    client = login(member)
    response = client.post(
        url,
        {
            "credential_placement": "header",
            "credential_name": "Authorization",
            "credential_value": "new-canary-2",
        },
        follow=True,
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "generation is now 2" in body and "new-canary-2" not in body
    mine.refresh_from_db()
    assert mine.authorization_generation == 2
    assert "new-canary-2" not in mine.credential_sealed


def test_an_admin_cannot_reconnect_someones_personal_connection(org, planted, admin_user, login):
    mine = Connection.objects.get(slug="mine")
    url = reverse("admin:governance_connection_action", args=[mine.pk, "reconnect"])
    response = login(admin_user).post(
        url,
        {
            "credential_placement": "header",
            "credential_name": "Authorization",
            "credential_value": "x",
        },
    )
    assert response.status_code == 403
    mine.refresh_from_db()
    assert mine.authorization_generation == 1


def test_a_new_api_key_is_shown_once_and_never_again(org, admin_user, login):
    client = login(admin_user)
    response = client.post(
        reverse("admin:governance_apikey_add"), {"org": org.pk, "name": "deploy"}
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    key = ApiKey.objects.get(name="deploy")
    body = response.content.decode()
    plaintext = body.split('id="issued-key">', 1)[1].split("<", 1)[0]
    assert plaintext.startswith("fbx_") and key.hint in plaintext
    assert key.key_hash not in body
    for url in (
        reverse("admin:governance_apikey_changelist"),
        reverse("admin:governance_apikey_change", args=[key.pk]),
    ):
        later = client.get(url).content.decode()
        assert plaintext not in later and key.key_hash not in later
