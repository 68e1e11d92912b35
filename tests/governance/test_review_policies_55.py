"""Review 55 (h13): how admins author policies — saving over the API, the numbering of rules in
what a refused save says, `manage.py policy` on a file that is not UTF-8, and a policy's
`tests:` against an organization whose bundles read one tool two ways."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from governance.models import Policy, PolicyVersion, Role
from governance.services.orgs import user_create
from tests.conftest import TEST_POLICY, Api

pytestmark = pytest.mark.django_db

TOP = "rules:  # first match wins; no match => ASK\n"


def with_rule_on_top(yaml_text: str, pattern: str, action: str) -> str:
    assert TOP in yaml_text
    return yaml_text.replace(TOP, f'rules:\n  - pattern: "{pattern}"\n    action: {action}\n')


def put(api: Api, body: dict):
    return api.client.put("/v1/policies/default", body, format="json")


def test_a_save_made_from_an_older_version_does_not_silently_undo_a_newer_one(org, admin_user):
    """Two admins open v1 over the API. Ada adds a NEVER rule for curl (v2). Bob, still
    working from v1, adds one for wget and says so (`base_version: 1`, as the portal editor's
    hidden field does). Before: Bob's save is a 201 v3 built on v1, so Ada's deny rule is
    gone without anyone being told (a lost update that loosens the policy). After: a 409
    `policy_changed` naming the current version, and v2 stays current."""
    bob = user_create(username="bob", org=org, role=Role.ADMIN, password="pw-bob-123")
    ada_api, bob_api = Api(user=admin_user), Api(user=bob)
    opened = ada_api.get("/v1/policies/default").json()
    assert opened["version"] == 1

    ada = put(ada_api, {"yaml": with_rule_on_top(opened["yaml"], "run_command:curl *", "NEVER")})
    assert ada.status_code == 201, ada.content
    assert ada.json()["version"] == 2

    stale = with_rule_on_top(opened["yaml"], "run_command:wget *", "NEVER")
    bob_save = put(bob_api, {"yaml": stale, "base_version": 1})
    assert bob_save.status_code == 409, bob_save.content
    assert bob_save.json()["error"] == "policy_changed"
    current = Policy.objects.get(org=org, name="default").current_version
    assert current.number == 2
    assert "run_command:curl *" in current.content
    assert PolicyVersion.objects.filter(policy__org=org).count() == 2

    # Built on the version that is current, the same save goes through.
    fresh = put(
        bob_api,
        {
            "yaml": with_rule_on_top(current.content, "run_command:wget *", "NEVER"),
            "base_version": 2,
        },
    )
    assert fresh.status_code == 201, fresh.content
    assert "run_command:curl *" in fresh.json()["yaml"]


BAD_THIRD_RULE = """name: default
rules:
  - pattern: "run_command:git status"
    action: ALWAYS
  - pattern: "run_command:rm *"
    action: NEVER
  - pattern: "run_command:ls *"
    action: Allow
"""


def test_a_refused_save_numbers_rules_as_every_other_surface_does(org, admin_user, tmp_path):
    """README: "Rules are numbered from 1, as people count them, on every surface" (gate
    reasons, rule.index, lint's rule_index, `policy test`'s lint lines, the editor). Before:
    a save refused for the third rule's action says `rules[2].action`, so an admin who
    counts as every other answer does edits the second rule. After: it says rule 3, over
    the API and from `manage.py policy test`, and the rule it names is the one at fault."""
    response = put(Api(user=admin_user), {"yaml": BAD_THIRD_RULE})
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "rule 3" in detail, detail
    assert "rules[2]" not in detail, detail

    path = tmp_path / "policy.yaml"
    path.write_text(BAD_THIRD_RULE)
    with pytest.raises(CommandError) as refused:
        call_command("policy", "test", str(path), "--org", "acme")
    assert "rule 3" in str(refused.value)
    assert "rules[2]" not in str(refused.value)
    assert Policy.objects.get(org=org, name="default").current_version.number == 1


def test_policy_commands_refuse_a_file_that_is_not_utf8_with_a_clear_error(org, tmp_path):
    """An admin's honest mistake: the policy file was saved in Latin-1 (a comment with
    'café'). Before: `manage.py policy test|import` ends in a UnicodeDecodeError traceback
    (the command only catches OSError). After: a CommandError that names the file and says
    it is not UTF-8; nothing is saved."""
    path = tmp_path / "policy.yaml"
    path.write_bytes(TEST_POLICY.encode("utf-8") + "# café\n".encode("latin-1"))
    for args in (["test", str(path)], ["import", str(path), "--org", "acme"]):
        with pytest.raises(CommandError) as refused:
            call_command("policy", *args)
        assert "UTF-8" in str(refused.value)
        assert str(path) in str(refused.value)
    assert PolicyVersion.objects.filter(policy__org=org).count() == 1


TEXT_RUN_COMMAND = """name: textual
tools:
  - name: run_command
    access: write
    match_argument: {name: command, kind: text}
    secrets: false
    schema: {type: object, properties: {command: {type: string}}, required: [command]}
"""

PROBE = "ls -la; rm -rf /"


def test_a_policy_test_that_passes_is_not_contradicted_by_the_gate(
    org, admin_user, make_run, tmp_path
):
    """Two bundles of one organization may both declare `run_command`, one as `kind: shell`
    (sandbox-basic) and one as `kind: text`. Saving a policy runs its `tests:` with ONE of
    them (governance.policy_store.known_tools keeps whichever row comes last), and the dry
    run answers the same way, while each run reads the tool as its own bundle declares it.
    Before: the admin's test `run_command:ls -la; rm -rf /` → NEVER passes and the policy is
    saved, yet a run with the `textual` bundle is allowed that very call by
    `run_command:ls *` (decision allow). After: the two declarations cannot coexist (the
    second import is refused), or the test is checked under every declaration; either way a
    passing test is never contradicted by the gate."""
    textual = tmp_path / "textual.yaml"
    textual.write_text(TEXT_RUN_COMMAND)
    try:
        call_command("bundle", "import", str(textual), "--org", "acme")
        # A bundle made after it declares run_command as a shell again: its reading is the
        # one saving and dry runs use (the last row known_tools reads).
        shell = tmp_path / "shell.yaml"
        shell.write_text(
            TEXT_RUN_COMMAND.replace("name: textual", "name: shell-too").replace(
                "kind: text", "kind: shell"
            )
        )
        call_command("bundle", "import", str(shell), "--org", "acme")
    except CommandError as refused:  # the fix: one tool name, one reading per organization
        assert "run_command" in str(refused)
        return

    tested = TEST_POLICY + f'  - call: "run_command:{PROBE}"\n    expect: NEVER\n'
    saved = put(Api(user=admin_user), {"yaml": tested})
    if saved.status_code == 400:  # the fix: the test is checked under every reading
        assert saved.json()["error"] == "policy_tests_failed"
        return
    assert saved.status_code == 201, saved.content

    run_id, runner = make_run(bundles=["textual"])
    gate = runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": "s-1",
            "tool_call_id": "c-1",
            "tool": "run_command",
            "arguments": {"command": PROBE},
        },
    ).json()
    assert gate["decision"] != "allow", (
        "the policy's own test says NEVER for this call, and the gate allowed it: " + str(gate)
    )
