"""The smaller screens: bundles imported as YAML, channels with a write-only secret,
memberships and agent secrets, each written through its service."""

import pytest
from django.urls import reverse

from governance import vault
from governance.models import AgentSecret, CapabilityBundle, Membership, NotificationChannel
from tests.conftest import TEST_BUNDLE

pytestmark = pytest.mark.django_db

BUNDLE = """name: tiny
tools:
  - name: echo
    access: read
    schema: {type: object}
"""


def test_an_admin_imports_a_bundle_and_reimports_it(org, admin_user, login):
    client = login(admin_user)
    response = client.post(
        reverse("admin:governance_capabilitybundle_add"), {"org": org.pk, "content": BUNDLE}
    )
    assert response.status_code == 302
    bundle = CapabilityBundle.objects.get(org=org, name="tiny")
    assert list(bundle.tools.values_list("name", flat=True)) == ["echo"]
    change = reverse("admin:governance_capabilitybundle_change", args=[bundle.pk])
    longer = BUNDLE + "  - name: shout\n    access: write\n"
    assert client.post(change, {"content": longer}).status_code == 302
    assert sorted(bundle.tools.values_list("name", flat=True)) == ["echo", "shout"]
    renamed = client.post(change, {"content": longer.replace("name: tiny", "name: other")})
    assert "This is bundle &#x27;tiny&#x27;" in renamed.content.decode()
    assert not CapabilityBundle.objects.filter(name="other").exists()


def test_a_bundle_that_does_not_parse_is_refused_with_the_reason(org, admin_user, login):
    response = login(admin_user).post(
        reverse("admin:governance_capabilitybundle_add"),
        {"org": org.pk, "content": "name: bad\ntools:\n  - name: 'no spaces allowed'\n"},
    )
    assert response.status_code == 200
    assert "tools[0].name must match" in response.content.decode()
    assert CapabilityBundle.objects.filter(org=org).count() == 1
    assert TEST_BUNDLE  # the org's own bundle is untouched


def test_a_webhook_secret_is_sealed_and_a_blank_one_keeps_it(org, admin_user, login):
    client = login(admin_user)
    response = client.post(
        reverse("admin:governance_notificationchannel_add"),
        {
            "org": org.pk,
            "name": "slack",
            "kind": "webhook",
            "url": "https://hooks.example.com/x",
            "secret": "whsec-canary-1",
            "emails": "",
            "is_active": "on",
        },
    )
    assert response.status_code == 302
    channel = NotificationChannel.objects.get(name="slack")
    assert vault.unseal_infrastructure(channel.secret_sealed) == "whsec-canary-1"
    change = reverse("admin:governance_notificationchannel_change", args=[channel.pk])
    page = client.get(change).content.decode()
    assert "whsec-canary-1" not in page and channel.secret_sealed not in page
    client.post(change, {"name": "slack", "url": "https://hooks.example.com/y", "secret": ""})
    channel.refresh_from_db()
    assert (channel.url, channel.is_active) == ("https://hooks.example.com/y", False)
    assert vault.unseal_infrastructure(channel.secret_sealed) == "whsec-canary-1"


def test_a_webhook_without_a_secret_or_an_email_list_without_addresses_is_refused(
    org, admin_user, login
):
    client = login(admin_user)
    url = reverse("admin:governance_notificationchannel_add")
    no_secret = client.post(
        url, {"org": org.pk, "name": "a", "kind": "webhook", "url": "https://x.example"}
    )
    assert "A webhook needs a signing secret." in no_secret.content.decode()
    bad_emails = client.post(url, {"org": org.pk, "name": "b", "kind": "email", "emails": "nope"})
    assert "One email address per line." in bad_emails.content.decode()
    assert not NotificationChannel.objects.exists()


def test_an_admin_changes_a_role_and_deactivates_a_member(org, admin_user, member, login):
    membership = Membership.objects.get(org=org, user=member)
    url = reverse("admin:governance_membership_change", args=[membership.pk])
    response = login(admin_user).post(url, {"role": "approver"})
    assert response.status_code == 302
    membership.refresh_from_db()
    assert (membership.role, membership.is_active) == ("approver", False)


def test_an_admin_adds_a_new_member_with_a_password(org, admin_user, login):
    response = login(admin_user).post(
        reverse("admin:governance_membership_add"),
        {"org": org.pk, "username": "nina", "password": "pw-nina-123", "role": "auditor"},
    )
    assert response.status_code == 302
    membership = Membership.objects.get(user__username="nina")
    assert membership.role == "auditor" and membership.user.check_password("pw-nina-123")


def test_an_agent_secret_is_sealed_and_setting_it_again_replaces_it(org, admin_user, login):
    client = login(admin_user)
    url = reverse("admin:governance_agentsecret_add")
    for value in ("first-canary", "second-canary"):
        response = client.post(url, {"org": org.pk, "agent": "", "name": "TOKEN", "value": value})
        assert response.status_code == 302
    secret = AgentSecret.objects.get(name="TOKEN")
    assert vault.unseal_secret(secret.value_sealed) == "second-canary"
    page = client.get(reverse("admin:governance_agentsecret_change", args=[secret.pk]))
    assert "canary" not in page.content.decode()
