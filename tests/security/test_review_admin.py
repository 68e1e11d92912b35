"""The Django admin from the attacker's side: one organization's admin reaching for another's
people, and odd input in the admin's forms. Each test makes the attempt, then checks it was
refused (a form error, never a 500) and nothing changed."""

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse

from governance.models import BundleTool, CapabilityBundle, Membership, Policy, Role
from governance.policy import PolicyDocument
from governance.services.orgs import user_create
from tests.conftest import TEST_BUNDLE, TEST_POLICY
from tests.governance.admin.test_policy_editor import TESTS_YAML, form_data

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.fixture
def gus(other_org):
    """An admin of another organization (globex), with a password he chose."""
    return user_create(username="gus", org=other_org, role=Role.ADMIN, password="pw-gus-123")


def memberships_of(username: str) -> set[tuple[str, str, bool]]:
    return set(
        Membership.objects.filter(user__username=username).values_list(
            "org__slug", "role", "is_active"
        )
    )


@pytest.mark.parametrize("password", ["", "pw-taken-over"])
def test_an_admin_cannot_pull_another_organizations_user_into_their_own(
    org, admin_user, gus, password
):
    before = memberships_of("gus")
    response = signed_in(admin_user).post(
        reverse("admin:governance_membership_add"),
        {"org": org.pk, "username": "gus", "password": password, "role": "admin"},
    )
    assert response.status_code == 200  # the form again, with the error
    assert "only a superuser adds an account of another organization" in response.content.decode()
    assert memberships_of("gus") == before == {("globex", "admin", True)}
    gus = User.objects.get(username="gus")
    assert gus.check_password("pw-gus-123")


def test_a_superuser_cannot_be_made_a_member_by_an_org_admin(org, admin_user):
    User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    response = signed_in(admin_user).post(
        reverse("admin:governance_membership_add"),
        {"org": org.pk, "username": "root", "role": "member"},
    )
    assert response.status_code == 200
    assert not Membership.objects.filter(user__username="root").exists()


def test_an_admin_still_adds_new_people_and_people_of_their_other_organizations(
    org, other_org, admin_user, gus
):
    user_create(username="ada", org=other_org, role=Role.ADMIN)  # ada administers both
    client = signed_in(admin_user)
    add = reverse("admin:governance_membership_add")
    new = client.post(
        add, {"org": org.pk, "username": "nell", "password": "pw-nell-1234", "role": "member"}
    )
    moved = client.post(add, {"org": org.pk, "username": "gus", "role": "approver"})
    assert new.status_code == moved.status_code == 302
    assert memberships_of("nell") == {("acme", "member", True)}
    assert memberships_of("gus") == {("globex", "admin", True), ("acme", "approver", True)}


def test_a_superuser_still_adds_an_existing_account(org, gus):
    root = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    response = signed_in(root).post(
        reverse("admin:governance_membership_add"),
        {"org": org.pk, "username": "gus", "role": "member"},
    )
    assert response.status_code == 302
    assert ("acme", "member", True) in memberships_of("gus")


BUNDLE = """name: {name}
tools:
  - name: lookup
    access: read
    schema: {schema}
"""

ODD_BUNDLES = {
    "a number as a key": ("odd", "{type: object, 1: x}"),
    "null and a boolean as keys": ("odd", "{type: object, null: 1, true: 2}"),
    "a lone surrogate in a value": ("odd", '{type: object, description: "\\ud800"}'),
    "a lone surrogate in the name": ('"\\ud800"', "{type: object}"),
    "a name that is no slug": ('"a b/../c"', "{type: object}"),
    "a name longer than the column": ("x" * 101, "{type: object}"),
    "an empty name": ('""', "{type: object}"),
    "not a number": ("odd", "{type: object, default: .nan}"),
    "infinity": ("odd", "{type: object, default: .inf}"),
    "a date": ("odd", "{type: object, default: 2001-12-14}"),
    "binary": ("odd", "{type: object, default: !!binary aGVsbG8=}"),
    "a NUL": ("odd", '{type: object, description: "a\\0b"}'),
}


@pytest.mark.parametrize("case", ODD_BUNDLES, ids=list(ODD_BUNDLES))
def test_a_bundle_json_cannot_hold_is_a_form_error_and_nothing_is_stored(org, admin_user, case):
    name, schema = ODD_BUNDLES[case]
    before = list(CapabilityBundle.objects.values_list("name", "content"))
    tools_before = BundleTool.objects.count()
    response = signed_in(admin_user).post(
        reverse("admin:governance_capabilitybundle_add"),
        {"org": org.pk, "content": BUNDLE.format(name=name, schema=schema)},
    )
    assert response.status_code == 200  # the form again, with the error
    assert "errorlist" in response.content.decode()
    assert list(CapabilityBundle.objects.values_list("name", "content")) == before
    assert BundleTool.objects.count() == tools_before


def test_re_importing_a_bundle_with_a_value_json_cannot_hold_keeps_its_tools(org, admin_user):
    bundle = CapabilityBundle.objects.get(org=org, name="sandbox-basic")
    tools = list(bundle.tools.values_list("name", "definition_digest"))
    odd = TEST_BUNDLE + "  - name: odd_tool\n    schema: {type: object, 1: x}\n"
    response = signed_in(admin_user).post(
        reverse("admin:governance_capabilitybundle_change", args=[bundle.pk]),
        {"content": odd},
    )
    assert response.status_code == 200
    assert list(bundle.tools.values_list("name", "definition_digest")) == tools
    assert CapabilityBundle.objects.get(pk=bundle.pk).content == TEST_BUNDLE


def test_an_ordinary_bundle_still_imports(org, admin_user):
    response = signed_in(admin_user).post(
        reverse("admin:governance_capabilitybundle_add"),
        {"org": org.pk, "content": BUNDLE.format(name="ok_bundle-2", schema="{type: object}")},
    )
    assert response.status_code == 302
    assert CapabilityBundle.objects.get(org=org, name="ok_bundle-2").tools.count() == 1


def test_two_admins_saving_over_the_same_version_at_once_cannot_both_win(
    transactional_db, org, admin_user
):
    """Both opened v1; each adds a NEVER rule and presses Save at the same moment. Before,
    both saves passed the editor's "changed since you opened it?" check (it read the current
    version before the service locked the policy), and v3 silently undid v2's rule. Many
    `tests:` make the window between that read and the lock wide, as a real policy's do."""
    policy = Policy.objects.get(org=org, name="default")
    rules = [
        (rule.pattern, rule.action.value) for rule in PolicyDocument.from_yaml(TEST_POLICY).rules
    ]
    tests = TESTS_YAML + "".join(
        f'- {{call: "run_command:rm -rf /x{index}", expect: NEVER}}\n' for index in range(400)
    )
    drafts = {
        "ada": form_data([("send_email:*", "NEVER"), *rules], do="save", tests=tests),
        "bea": form_data([("run_command:*", "NEVER"), *rules], do="save", tests=tests),
    }
    user_create(username="bea", org=org, role=Role.ADMIN)
    url = reverse("admin:governance_policy_change", args=[policy.pk])
    barrier = threading.Barrier(len(drafts))
    statuses: dict[str, int] = {}

    def save(username: str) -> None:
        try:
            client = signed_in(User.objects.get(username=username))
            barrier.wait()
            statuses[username] = client.post(url, drafts[username]).status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(name,)) for name in drafts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(statuses.values()) == [302, 409]
    policy.refresh_from_db()
    assert list(policy.versions.values_list("number", flat=True).order_by("number")) == [1, 2]
    winner = next(name for name, status in statuses.items() if status == 302)
    first_rule = policy.current_version.document["rules"][0]
    assert (first_rule["pattern"], first_rule["action"]) == drafts_first_rule(drafts[winner])


def drafts_first_rule(data: dict) -> tuple[str, str]:
    return data["rules-0-pattern"], data["rules-0-action"]


@pytest.mark.parametrize(
    "arguments",
    ["[" * 100_000, '{"a":' * 5000 + "1" + "}" * 5000, '{"to": "\\u0000"}', "[1, 2]"],
    ids=["a deep array", "a deep object", "a NUL", "not an object"],
)
def test_dry_run_arguments_the_api_would_refuse_are_a_form_error(org, auditor, arguments):
    """The policy page's dry run read its JSON with `json.loads`: `[[[…` nested past the
    recursion limit was a 500. It reads them as the API does now, and refuses what it does."""
    policy = Policy.objects.get(org=org, name="default")
    rules = [
        (rule.pattern, rule.action.value) for rule in PolicyDocument.from_yaml(TEST_POLICY).rules
    ]
    response = signed_in(auditor).post(
        reverse("admin:governance_policy_change", args=[policy.pk]),
        form_data(rules, do="dry_run", **{"dry-tool": "send_email", "dry-arguments": arguments}),
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "Arguments" in page and 'id="dry-run-result"' not in page
    assert policy.versions.count() == 1


# `str.isdigit` is true of "²" and "٣" and of 5,000 nines; `int` refuses the first and the
# last (a ValueError, so a 500). Each of these reached `int` after an `isdigit` check.
NOT_QUITE_NUMBERS = ["²", "9" * 5000]


@pytest.mark.parametrize("number", NOT_QUITE_NUMBERS, ids=["superscript two", "5000 digits"])
def test_a_number_int_refuses_in_the_policy_pages_is_refused_not_a_500(org, admin_user, number):
    policy = Policy.objects.get(org=org, name="default")
    editor = reverse("admin:governance_policy_change", args=[policy.pk])
    client = signed_in(admin_user)
    rules = [
        (rule.pattern, rule.action.value) for rule in PolicyDocument.from_yaml(TEST_POLICY).rules
    ]

    assert client.get(editor, {"diff_from": number}).status_code == 200
    assert client.get(editor, {"diff_to": number}).status_code == 200
    save = form_data(rules, do="save")
    save["rules-0-ORDER"] = number
    assert client.post(editor, save).status_code == 200  # the editor again, with the error
    imported = client.post(
        reverse("admin:governance_policy_add"),
        {"org": number, "import-yaml": "name: smuggled\nrules: []\n"},
    )
    assert imported.status_code == 400

    assert policy.versions.count() == 1
    assert not Policy.objects.filter(name="smuggled").exists()


@pytest.mark.parametrize("number", NOT_QUITE_NUMBERS, ids=["superscript two", "5000 digits"])
def test_a_port_int_refuses_in_the_allowed_hosts_is_a_form_error(org, admin_user, settings, number):
    settings.FLUIDBOX_ORG_ADMINS_ALLOW_HOSTS = True
    response = signed_in(admin_user).post(
        reverse("admin:governance_organization_change", args=[org.pk]),
        {"connection_allowed_hosts": f"10.0.0.1:{number}"},
    )
    assert response.status_code == 200
    assert "the port must be a number from 1 to 65535" in response.content.decode()
    org.refresh_from_db()
    assert org.connection_allowed_hosts == ""


def test_an_approval_address_with_a_superscript_digit_is_not_a_500(org, admin_user):
    response = signed_in(admin_user).get("/admin/governance/approval/%C2%B2/change/")
    assert response.status_code in (302, 404)
