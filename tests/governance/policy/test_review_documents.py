"""Hostile policy YAML, as an admin sends it: each is a clear 400 that changes nothing.

YAML nested thousands of levels deep made PyYAML's composer raise `RecursionError`, and an
integer over Python's 4,300-digit limit a `ValueError`: neither is a `YAMLError`, so both
escaped the policy parser as a 500 on save, replay and the CLI's `policy test`."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from governance.models import PolicyVersion
from tests.conftest import Api

pytestmark = pytest.mark.django_db

HOSTILE = {
    "nested_rules": "name: default\nrules: " + "[" * 5000 + "]" * 5000 + "\n",
    "nested_test_arguments": (
        "name: default\nrules: []\ntests:\n  - tool: t\n    expect: ASK\n    arguments: "
        + "{a: " * 3000
        + "1"
        + "}" * 3000
        + "\n"
    ),
    "huge_timeout": "name: default\napproval_timeout: " + "9" * 5000 + "\nrules: []\n",
    "huge_argument": (
        "name: default\nrules: []\ntests:\n  - tool: t\n    expect: ASK\n"
        "    arguments: {n: " + "9" * 5000 + "}\n"
    ),
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_policy_is_a_400_and_saves_nothing(org, admin_user, text):
    api = Api(user=admin_user)
    saved = api.client.put("/v1/policies/default", {"yaml": text}, format="json")
    assert saved.status_code == 400, saved.content
    assert saved.json()["error"] == "invalid_policy"
    replayed = api.post("/v1/policies/default/replay", {"draft": text})
    assert replayed.status_code == 400, replayed.content
    assert replayed.json()["error"] == "invalid_policy"
    assert PolicyVersion.objects.filter(policy__org=org).count() == 1


def test_a_deeply_nested_policy_names_the_problem(org, admin_user):
    saved = Api(user=admin_user).client.put(
        "/v1/policies/default", {"yaml": HOSTILE["nested_rules"]}, format="json"
    )
    assert "nested deeper than" in saved.json()["detail"]


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_policy_test_on_a_hostile_file_is_a_command_error(tmp_path, text):
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(CommandError, match="policy does not parse"):
        call_command("policy", "test", str(path))


def _laughs(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + f"\n  - {{name: t, schema: {{enum: *a{levels - 1}}}}}\n"


HOSTILE_BUNDLES = {
    # What a reviewer reads first is `write`; PyYAML's safe_load kept the last, `read`, and
    # a read-only run was then given the tool.
    "repeated_access": "name: extra\ntools:\n  - name: t\n    access: write\n    access: read\n",
    # Ten million strings from a few lines, digested and stored as the tool's schema.
    "billion_laughs": "name: extra\n" + _laughs(8).replace("\n  - ", "\ntools:\n  - ", 1),
    "nested": "name: extra\ntools: " + "[" * 5000 + "]" * 5000 + "\n",
    "huge_integer": "name: extra\ntools:\n  - {name: t, schema: {maxLength: " + "9" * 5000 + "}}\n",
}


@pytest.mark.parametrize("text", HOSTILE_BUNDLES.values(), ids=HOSTILE_BUNDLES.keys())
def test_a_hostile_bundle_is_refused_and_imports_nothing(org, tmp_path, text):
    from governance.models import CapabilityBundle

    before = set(CapabilityBundle.objects.values_list("name", flat=True))
    path = tmp_path / "bundle.yaml"
    path.write_text(text)
    with pytest.raises(CommandError, match="bundle YAML does not parse"):
        call_command("bundle", "import", str(path), "--org", "acme")
    assert set(CapabilityBundle.objects.values_list("name", flat=True)) == before
