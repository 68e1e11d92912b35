"""Policies as an admin and an auditor meet them: dry-run, replay, versions, tests."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from governance.models import PolicyVersion
from tests.conftest import TEST_POLICY, Api
from tests.governance.gate.test_pipeline import ask

pytestmark = pytest.mark.django_db


def write(path, text: str):
    path.write_text(text)
    return path


def evaluate(api, body, name="default"):
    return api.post(f"/v1/policies/{name}/evaluate", body)


def test_a_dry_run_names_the_rule_and_each_shell_segment(org, auditor):
    response = evaluate(Api(user=auditor), {"call": "run_command:ls -la && rm -rf /"})
    assert response.status_code == 200
    body = response.json()
    assert body["verdict"] == "NEVER"
    assert body["rule"]["pattern"] == "run_command:rm *"
    verdicts = {segment["subject"]: segment["verdict"] for segment in body["segments"]}
    assert verdicts["run_command:rm -rf /"] == "NEVER"
    assert verdicts["run_command:ls -la"] == "ALWAYS"


def test_a_dry_run_takes_tool_and_arguments(org, admin_user):
    response = evaluate(
        Api(user=admin_user),
        {"tool": "write_file", "arguments": {"path": "/workspace/../etc/shadow", "content": ""}},
    )
    assert response.json()["verdict"] == "NEVER"
    assert response.json()["rule"]["pattern"] == "write_file:*"


def test_members_and_other_orgs_cannot_read_policies(org, member, other_operator):
    assert evaluate(Api(user=member), {"call": "read_file:x"}).status_code == 404
    assert other_operator.get("/v1/policies/default").json()["version"] == 1  # its own policy
    from governance.models import Organization

    assert Organization.objects.count() == 2


def test_a_dry_run_needs_exactly_one_of_call_or_tool(org, auditor):
    response = evaluate(Api(user=auditor), {"call": "a:b", "tool": "read_file"})
    assert response.status_code == 400
    assert evaluate(Api(user=auditor), {}).status_code == 400


def test_saving_a_policy_whose_tests_fail_is_refused_and_saves_nothing(org, admin_user):
    # Without both: `rm -rf /` deletes `/`, a write `write_file:*` would deny too.
    broken = TEST_POLICY.replace('pattern: "run_command:rm *"', 'pattern: "run_command:rmdir *"')
    broken = broken.replace('pattern: "write_file:*"', 'pattern: "write_file:/etc/*"')
    response = Api(user=admin_user).client.put(
        "/v1/policies/default", {"yaml": broken}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"] == "policy_tests_failed"
    assert "run_command:rm -rf /" in response.json()["failures"][0]
    assert PolicyVersion.objects.filter(policy__org=org).count() == 1


def test_a_saved_policy_is_a_new_version_and_old_runs_keep_theirs(org, operator, make_run):
    run_id, runner = make_run()
    stricter = TEST_POLICY.replace(
        '  - pattern: "run_command:git status"\n    action: ALWAYS',
        '  - pattern: "run_command:git status"\n    action: NEVER',
    )
    response = operator.client.put("/v1/policies/default", {"yaml": stricter}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["version"] == 2
    old = ask(runner, run_id, "run_command", {"command": "git status"})
    assert old["decision"] == "allow"
    new_id, new_runner = make_run()
    assert ask(new_runner, new_id, "run_command", {"command": "git status"})["decision"] == "deny"


def test_auditors_cannot_save_policies(org, auditor):
    response = Api(user=auditor).client.put(
        "/v1/policies/default", {"yaml": TEST_POLICY}, format="json"
    )
    assert response.status_code == 403


def test_replay_lists_every_recorded_call_whose_verdict_would_change(org, auditor, make_run):
    run_id, runner = make_run()
    ask(runner, run_id, "run_command", {"command": "git status"}, call_id="c-1")
    ask(runner, run_id, "run_command", {"command": "ls -la"}, call_id="c-2")
    ask(runner, run_id, "read_file", {"path": "/workspace/a"}, call_id="c-3")
    draft = TEST_POLICY.replace(
        '  - pattern: "run_command:ls *"\n    action: ALWAYS',
        '  - pattern: "run_command:ls *"\n    action: ASK',
    )
    response = Api(user=auditor).post("/v1/policies/default/replay", {"draft": draft})
    assert response.status_code == 200
    body = response.json()
    assert body["examined"] == 3
    changed = body["changed"]
    assert len(changed) == 1
    assert "ls -la" in str(changed[0])
    assert (changed[0]["old_verdict"], changed[0]["new_verdict"]) == ("ALWAYS", "ASK")
    assert changed[0]["recorded_decision"] == "allow"
    assert changed[0]["tool_call_id"] == "c-2"


def test_replay_of_an_unparseable_draft_is_a_400(org, auditor):
    response = Api(user=auditor).post("/v1/policies/default/replay", {"draft": "rules: [oops"})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_policy"


def test_export_then_import_gives_the_same_digest(org, tmp_path, capsys):
    call_command("policy", "export", "default", "--org", "acme")
    exported = capsys.readouterr().out
    path = tmp_path / "policy.yaml"
    path.write_text(exported)
    call_command("policy", "import", str(path), "--org", "acme")
    versions = list(PolicyVersion.objects.filter(policy__org=org).order_by("number"))
    assert len(versions) == 2
    assert versions[0].digest == versions[1].digest


def test_policy_test_exits_non_zero_on_a_failing_test(tmp_path, capsys):
    good = tmp_path / "good.yaml"
    good.write_text(TEST_POLICY)
    call_command("policy", "test", str(good))
    assert "1 policy test(s) passed" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text(TEST_POLICY.replace("expect: NEVER", "expect: ALWAYS"))
    with pytest.raises(CommandError, match="1 of 1 policy test"):
        call_command("policy", "test", str(bad))
    assert "FAIL run_command:rm -rf /" in capsys.readouterr().err


def test_policy_test_prints_lint_warnings(tmp_path, capsys):
    path = tmp_path / "lint.yaml"
    path.write_text(
        'name: lint\nrules:\n  - {pattern: "*", action: ASK}\n'
        '  - {pattern: "read_file:*", action: ALWAYS}\n'
    )
    call_command("policy", "test", str(path))
    # Numbered as people count: the second rule is shadowed by the first.
    assert "warning: rule 2: never decides anything: rule 1 ('*')" in capsys.readouterr().out


def test_bundle_import_command(org, tmp_path, capsys):
    path = tmp_path / "bundle.yaml"
    path.write_text(
        "name: extra\ntools:\n  - {name: grep_repo, access: read, "
        "match_argument: {name: q, kind: text}}\n"
    )
    call_command("bundle", "import", str(path), "--org", "acme")
    assert "bundle extra imported with 1 tool(s)" in capsys.readouterr().out
    path.write_text("name: extra\ntools:\n  - {name: 'bad name', access: read}\n")
    with pytest.raises(CommandError):
        call_command("bundle", "import", str(path), "--org", "acme")


def test_an_exported_policy_tested_without_org_says_why_its_shell_tests_fail(org, tmp_path, capsys):
    shell_test = 'tests:\n  - {call: "run_command:ls -la; rm -rf /", expect: NEVER}\n'
    text = TEST_POLICY.split("tests:")[0] + shell_test
    call_command("policy", "import", str(write(tmp_path / "in.yaml", text)), "--org", "acme")
    capsys.readouterr()
    call_command("policy", "export", "default", "--org", "acme")
    exported = write(tmp_path / "exported.yaml", capsys.readouterr().out)

    with pytest.raises(CommandError, match="1 of 1 policy test"):
        call_command("policy", "test", str(exported))
    err = capsys.readouterr().err
    # Read as plain text, `ls *` admits the whole line.
    assert "FAIL run_command:ls -la; rm -rf /: expected NEVER, got ALWAYS" in err
    assert "without --org" in err and "--org SLUG" in err
    # With the organization, its bundle says run_command is a shell tool: the test passes.
    call_command("policy", "test", str(exported), "--org", "acme")
    assert "ok: 1 policy test(s) passed" in capsys.readouterr().out
