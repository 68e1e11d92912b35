"""The admin and policy-authoring surfaces from the admin's and the attacker's side, second
pass. Each test makes the attempt over HTTP and checks the answer, the database and the gate."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from governance.models import Membership, PolicyVersion
from tests.conftest import TEST_POLICY, Api

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


# A superuser deleting, in Django's user screens, an account that saved policy versions.
# Every save is an immutable PolicyVersion whose author is the record of who changed the
# rules (no ledger event records a policy save). `PolicyVersion.author` is SET_NULL, so
# deleting the account would rewrite every version it saved to "author: none". users.py
# refuses to rename such an account for this reason, and to delete it (the review found the
# delete refused only because the account's Membership rows cascade and MembershipAdmin
# refuses deletes; it is now refused in its own right).
def _authored_v2(org, admin_user) -> PolicyVersion:
    saved = Api(user=admin_user).client.put(
        "/v1/policies/default",
        {"yaml": TEST_POLICY.replace("approval_timeout: 300", "approval_timeout: 301")},
        format="json",
    )
    assert saved.status_code == 201, saved.content
    version = PolicyVersion.objects.get(policy__org=org, policy__name="default", number=2)
    assert version.author == admin_user
    return version


def test_a_superuser_cannot_delete_the_author_of_a_policy_version(org, admin_user):
    version = _authored_v2(org, admin_user)
    root = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    client = signed_in(root)
    url = reverse("admin:auth_user_delete", args=[admin_user.pk])
    client.post(url, {"post": "yes"})
    assert User.objects.filter(pk=admin_user.pk).exists(), "the author's account was deleted"
    version.refresh_from_db()
    assert version.author_id == admin_user.pk


def test_nor_through_the_bulk_delete_action(org, admin_user):
    version = _authored_v2(org, admin_user)
    root = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    client = signed_in(root)
    client.post(
        reverse("admin:auth_user_changelist"),
        {"action": "delete_selected", "_selected_action": [admin_user.pk], "post": "yes"},
    )
    assert User.objects.filter(pk=admin_user.pk).exists(), "the author's account was deleted"
    version.refresh_from_db()
    assert version.author_id == admin_user.pk


def test_nor_once_the_author_has_left_every_organization(org, admin_user):
    # With no Membership row left to cascade, only the account's own guard keeps it.
    version = _authored_v2(org, admin_user)
    Membership.objects.filter(user=admin_user).delete()
    root = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    response = signed_in(root).post(
        reverse("admin:auth_user_delete", args=[admin_user.pk]), {"post": "yes"}
    )
    assert b"deactivate it instead" in response.content
    assert User.objects.filter(pk=admin_user.pk).exists(), "the author's account was deleted"
    version.refresh_from_db()
    assert version.author_id == admin_user.pk


def test_an_account_no_record_names_is_still_deleted(org):
    root = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    stray = User.objects.create_user("stray", "s@example.com", "pw-stray-123")
    response = signed_in(root).post(
        reverse("admin:auth_user_delete", args=[stray.pk]), {"post": "yes"}
    )
    assert response.status_code == 302
    assert not User.objects.filter(pk=stray.pk).exists()
