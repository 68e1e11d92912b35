"""The policy page: edits saved through the service as new versions, refused when the
policy's tests fail; dry run, lint, replay and diffs shown before anything is saved."""

import pytest
from django.urls import reverse

from governance.models import Policy
from governance.policy import PolicyDocument
from tests.conftest import TEST_POLICY
from tests.governance.admin.scenarios import ask, sandbox_run

pytestmark = pytest.mark.django_db

TESTS_YAML = '- call: "run_command:rm -rf /"\n  expect: NEVER\n'


def current_rules() -> list[tuple[str, str]]:
    document = PolicyDocument.from_yaml(TEST_POLICY)
    return [(rule.pattern, rule.action.value) for rule in document.rules]


def form_data(rules, *, do, base_version=1, tests=TESTS_YAML, order=None, **extra) -> dict:
    data = {
        "do": do,
        "autonomous_fallback": "deny",
        "approval_timeout": "300",
        "tests": tests,
        "note": "",
        "base_version": str(base_version),
        "rules-TOTAL_FORMS": str(len(rules)),
        "rules-INITIAL_FORMS": str(len(rules)),
        "rules-MIN_NUM_FORMS": "0",
        "rules-MAX_NUM_FORMS": "1000",
    }
    for index, (pattern, action) in enumerate(rules):
        data[f"rules-{index}-pattern"] = pattern
        data[f"rules-{index}-action"] = action
        data[f"rules-{index}-ORDER"] = str(order[index] if order else index + 1)
    data.update(extra)
    return data


@pytest.fixture
def policy(org) -> Policy:
    return Policy.objects.get(org=org, name="default")


def editor(policy) -> str:
    return reverse("admin:governance_policy_change", args=[policy.pk])


def test_the_page_shows_rules_in_order_the_saved_yaml_and_lint(policy, admin_user, login):
    page = login(admin_user).get(editor(policy)).content.decode()
    positions = [page.index(f'value="{pattern}"') for pattern, _ in current_rules()]
    assert positions == sorted(positions)
    assert 'id="current-yaml"' in page and "approval_timeout: 300" in page
    assert "shell-argument-injection" in page  # `run_command:ls *` is ALWAYS with a star


def test_an_admin_reorders_and_edits_rules_into_a_new_version(policy, admin_user, login):
    rules = current_rules()
    rules[2] = ("run_command:git status", "NEVER")
    order = [1, 3, 2, 4, 5, 6, 7]  # git status above rm *
    response = login(admin_user).post(editor(policy), form_data(rules, do="save", order=order))
    assert response.status_code == 302
    policy.refresh_from_db()
    version = policy.current_version
    assert (version.number, version.author.username) == (2, "ada")
    assert [r["pattern"] for r in version.document["rules"][:3]] == [
        "read_file:*",
        "run_command:git status",
        "run_command:rm *",
    ]
    assert version.document["rules"][1]["action"] == "NEVER"


def test_a_save_whose_tests_fail_is_refused_and_the_failures_are_shown(policy, admin_user, login):
    # Without both: `rm -rf /` deletes `/`, a write the `write_file:*` rule would deny too.
    rules = [r for r in current_rules() if r[0] not in ("run_command:rm *", "write_file:*")]
    response = login(admin_user).post(editor(policy), form_data(rules, do="save"))
    assert response.status_code == 400
    body = response.content.decode()
    assert "Not saved: the policy's tests fail." in body
    assert "run_command:rm -rf /: expected NEVER, got ASK" in body
    policy.refresh_from_db()
    assert policy.current_version.number == 1


def test_a_draft_made_from_a_stale_version_is_not_saved(policy, admin_user, login):
    client = login(admin_user)
    assert client.post(editor(policy), form_data(current_rules(), do="save")).status_code == 302
    response = client.post(editor(policy), form_data(current_rules(), do="save", base_version=1))
    assert response.status_code == 409
    assert "The policy changed since you opened it: v2 is now current" in response.content.decode()
    policy.refresh_from_db()
    assert policy.current_version.number == 2


def test_the_dry_run_names_the_rule_and_every_shell_segment(policy, admin_user, login):
    response = login(admin_user).post(
        editor(policy),
        form_data(current_rules(), do="dry_run", **{"dry-call": "run_command:ls x; rm -rf /"}),
    )
    body = response.content.decode()
    result = body.split('id="dry-run-result"', 1)[1]
    assert 'data-verdict="NEVER"' in result
    assert "<code>run_command:ls x</code>" in result
    assert "<code>run_command:rm -rf /</code>" in result
    assert "run_command:rm *" in result and "run_command:ls *" in result


def test_the_dry_run_compares_the_draft_with_the_saved_version(policy, auditor, login):
    rules = [("send_email:*", "NEVER"), *current_rules()]
    body = (
        login(auditor)
        .post(
            editor(policy),
            form_data(
                rules, do="dry_run", **{"dry-tool": "send_email", "dry-arguments": '{"to": "x"}'}
            ),
        )
        .content.decode()
    )
    assert 'data-against="saved"' in body and 'data-verdict="ASK"' in body
    assert 'data-against="draft"' in body and 'data-verdict="NEVER"' in body
    assert "The draft changes this verdict." in body


def test_the_what_if_replay_lists_the_recorded_calls_the_draft_changes(
    org, policy, admin_user, login
):
    run, _ = sandbox_run(org)
    ask(run, "send_email", {"to": "bob@example.com"}, call_id="c-1")
    ask(run, "read_file", {"path": "/workspace/a"}, call_id="c-2")
    rules = [("send_email:*", "NEVER"), *current_rules()]
    body = login(admin_user).post(editor(policy), form_data(rules, do="replay")).content.decode()
    replay = body.split('id="replay-result"', 1)[1]
    assert "2 recorded calls examined" in replay
    assert "<strong>1</strong> would be decided differently" in replay
    assert "send_email:{&quot;to&quot;:&quot;bob@example.com&quot;}" in replay
    policy.refresh_from_db()
    assert policy.current_version.number == 1


@pytest.mark.parametrize("do", ["check", "replay", "save"])
def test_the_dry_run_box_complains_only_when_it_is_used(policy, admin_user, login, do):
    """A newcomer saw "Give either a call (tool:subject) or a tool." after Check, Replay or
    a refused save, with the dry-run box left empty. What was typed in it is kept."""
    client = login(admin_user)
    rules = current_rules()
    failing = '- call: "run_command:rm -rf /"\n  expect: ALWAYS\n'  # refuses the save
    data = form_data(rules, do=do, tests=failing, **{"dry-tool": "", "dry-call": ""})
    page = client.post(editor(policy), data).content.decode()
    assert "Give either a call" not in page
    kept = form_data(rules, do="check", **{"dry-call": "run_command:make build"})
    assert 'value="run_command:make build"' in client.post(editor(policy), kept).content.decode()
    used = form_data(rules, do="dry_run", **{"dry-tool": "", "dry-call": ""})
    assert "Give either a call" in client.post(editor(policy), used).content.decode()


def test_lint_warnings_sit_on_the_rule_they_are_about(policy, admin_user, login):
    rules = [
        ("run_command:*", "ASK"),
        ("run_command:git status", "ALWAYS"),
        ("nosuchtool:*", "NEVER"),
    ]
    body = (
        login(admin_user)
        .post(editor(policy), form_data(rules, do="check", tests=""))
        .content.decode()
    )
    assert 'data-code="shadowed"' in body
    assert 'data-code="unknown-tool"' in body


def test_versions_can_be_compared(policy, admin_user, login):
    client = login(admin_user)
    rules = [("write_file:/tmp/*", "ALWAYS"), *current_rules()]
    client.post(editor(policy), form_data(rules, do="save"))
    body = client.get(editor(policy) + "?diff_from=1&diff_to=2").content.decode()
    diff = body.split('id="diff"', 1)[1]
    assert '<span class="fb-diff-add">+  - pattern: &quot;write_file:/tmp/*&quot;</span>' in diff


def test_an_auditor_may_dry_run_but_a_save_is_refused(policy, auditor, login):
    client = login(auditor)
    page = client.get(editor(policy)).content.decode()
    assert 'id="save-policy"' not in page
    rules = [("send_email:*", "ALWAYS"), *current_rules()]
    assert client.post(editor(policy), form_data(rules, do="save")).status_code == 403
    policy.refresh_from_db()
    assert policy.current_version.number == 1


def test_yaml_loaded_into_the_draft_is_saved_only_on_save(policy, admin_user, login):
    client = login(admin_user)
    yaml_text = TEST_POLICY.replace(
        '"send_email:*"\n    action: ASK', '"send_email:*"\n    action: NEVER'
    )
    body = client.post(
        editor(policy), form_data(current_rules(), do="load_yaml", **{"import-yaml": yaml_text})
    ).content.decode()
    assert "YAML loaded into the draft" in body
    assert 'id="draft-yaml"' in body
    policy.refresh_from_db()
    assert policy.current_version.number == 1


def test_importing_yaml_creates_a_policy_or_refuses_it_with_the_reason(org, admin_user, login):
    client = login(admin_user)
    url = reverse("admin:governance_policy_add")
    good = 'name: strict\nrules:\n  - {pattern: "*", action: NEVER}\n'
    response = client.post(url, {"org": org.pk, "import-yaml": good})
    assert response.status_code == 302
    assert Policy.objects.get(org=org, name="strict").current_version.number == 1
    bad = good + 'tests:\n  - {call: "read_file:/a", expect: ALWAYS}\n'
    response = client.post(url, {"org": org.pk, "import-yaml": bad})
    assert response.status_code == 400
    assert "read_file:/a: expected ALWAYS, got NEVER" in response.content.decode()
    assert Policy.objects.get(org=org, name="strict").current_version.number == 1


def test_the_export_is_the_saved_yaml(policy, auditor, login):
    response = login(auditor).get(reverse("admin:governance_policy_export", args=[policy.pk]))
    assert response.content.decode() == policy.current_version.content


def test_tests_with_tool_and_arguments_survive_a_round_trip_through_the_page(
    org, policy, admin_user, login
):
    import html
    import re

    from governance.services.policies import policy_save

    text = TEST_POLICY + '  - tool: run_command\n    arguments: {command: "ls\\u200b; rm -rf /"}\n'
    text += "    expect: NEVER\n"
    before = policy_save(org=org, text=text, author=None)
    client = login(admin_user)
    page = client.get(editor(policy)).content.decode()
    textarea = re.search(r'<textarea name="tests"[^>]*>(.*?)</textarea>', page, re.S).group(1)
    tests = html.unescape(textarea).lstrip("\n")
    assert "\u200b" not in tests and "\\u200b" in tests  # escaped, as the exporter writes it
    response = client.post(
        editor(policy), form_data(current_rules(), do="save", base_version=2, tests=tests)
    )
    assert response.status_code == 302
    policy.refresh_from_db()
    assert policy.current_version.document == before.document
