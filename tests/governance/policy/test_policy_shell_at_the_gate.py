"""The shell rules through the real surfaces: bundle YAML, the admin, a frozen run, the gate."""

import pytest
from django.test import Client
from django.urls import reverse

from governance.models import BundleTool, ToolCall
from governance.services.bundles import bundle_import
from governance.services.policies import policy_save
from ledger.models import Event
from tests.conftest import TEST_POLICY
from tests.governance.gate.test_pipeline import ask

pytestmark = pytest.mark.django_db

ZSH_BUNDLE = """name: zsh-tools
tools:
  - name: zsh_command
    access: write
    match_argument: {name: command, kind: shell, shell: zsh, read_tool: read_file, cwd: /workspace}
    schema: {type: object, properties: {command: {type: string}}, required: [command]}
"""


@pytest.fixture
def login():
    def client_for(user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return client_for


def permission(runner, run_id, arguments, call_id):
    return runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": "s-1",
            "tool_call_id": call_id,
            "tool": "run_command",
            "arguments": arguments,
            "wait_seconds": 0,
        },
    )


def test_a_bundle_declares_its_shell_and_the_frozen_run_carries_it(org, operator):
    bundle_import(org=org, text=ZSH_BUNDLE)

    response = operator.post(
        "/v1/runs",
        {
            "agent": "a",
            "policy": "default",
            "autonomy": "supervised",
            "source": {"kind": "manual"},
            "budget_tokens": 1000,
            "bundles": ["zsh-tools"],
            "connections": [],
        },
    )

    assert response.status_code == 201, response.content
    (tool,) = response.json()["tools"]
    assert tool["match_argument"] == {
        "name": "command",
        "kind": "shell",
        "shell": "zsh",
        "read_tool": "read_file",
        "cwd": "/workspace",
    }


@pytest.mark.parametrize(
    ("match", "message"),
    [
        ("{name: command, kind: shell, shell: fish}", "shell must be bash, sh or zsh"),
        ("{name: path, kind: path, shell: sh}", "only apply to kind shell"),
        ("{name: command, kind: shell, write_tool: 'no spaces'}", "write_tool must match"),
        ("{name: command, kind: shell, dialect: sh}", "needs a name and kind"),
        ("{name: command, kind: shell, cwd: workspace}", "cwd must be an absolute path"),
    ],
)
def test_the_admin_refuses_a_bundle_with_a_bad_shell_declaration(
    org, admin_user, login, match, message
):
    text = ZSH_BUNDLE.replace(
        "{name: command, kind: shell, shell: zsh, read_tool: read_file, cwd: /workspace}", match
    )

    response = login(admin_user).post(
        reverse("admin:governance_capabilitybundle_add"), {"org": org.pk, "content": text}
    )

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not BundleTool.objects.filter(name="zsh_command").exists()


def test_the_admin_imports_a_bundle_with_a_dialect(org, admin_user, login):
    response = login(admin_user).post(
        reverse("admin:governance_capabilitybundle_add"), {"org": org.pk, "content": ZSH_BUNDLE}
    )

    assert response.status_code == 302
    assert BundleTool.objects.get(name="zsh_command").match_argument["shell"] == "zsh"


def test_a_nul_byte_in_a_command_is_refused_with_a_400_and_nothing_is_recorded(make_run):
    run_id, runner = make_run()

    response = permission(runner, run_id, {"command": "ls -la\u0000; rm -rf /"}, "c-nul")

    assert response.status_code == 400
    assert response.json()["error"] == "invalid"
    assert not ToolCall.objects.filter(tool_call_id="c-nul").exists()
    assert not Event.objects.filter(run_id=run_id, type="tool.requested").exists()


def test_other_control_bytes_reach_the_engine_and_are_asked_not_allowed(make_run):
    run_id, runner = make_run()

    decision = ask(runner, run_id, "run_command", {"command": "ls -la\u001b[8m"}, call_id="c-esc")

    assert decision["decision"] == "pending"  # supervised: a human is asked
    stored = ToolCall.objects.get(tool_call_id="c-esc")
    assert stored.arguments == {"command": "ls -la\u001b[8m"}  # kept exactly, never cut


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("ls -la | ls -l", "allow"),
        ("ls -la > /workspace/.git/config", "pending"),
        ("ls $(rm -rf /)", "deny"),
        ("ls -la &&", "pending"),
        ("ls -la 3>/dev/tcp/127.0.0.1/80", "deny"),  # `write_file:*` is NEVER
    ],
)
def test_the_gate_decides_shell_commands_by_the_subset(make_run, command, decision):
    run_id, runner = make_run()

    assert ask(runner, run_id, "run_command", {"command": command})["decision"] == decision


def test_a_policy_whose_yaml_escapes_a_nul_is_refused_with_a_400_not_stored(org, admin_user):
    from governance.models import PolicyVersion
    from tests.conftest import TEST_POLICY, Api

    text = TEST_POLICY.replace(
        '  - call: "run_command:rm -rf /"', '  - call: "run_command:ls\\0; rm -rf /"'
    )

    response = Api(user=admin_user).client.put(
        "/v1/policies/default", {"yaml": text}, format="json"
    )

    assert response.status_code == 400
    assert "NUL" in response.json()["detail"]
    assert PolicyVersion.objects.filter(policy__org=org).count() == 1


def test_a_dry_run_with_a_nul_is_a_400(org, auditor):
    from tests.conftest import Api

    api = Api(user=auditor)
    by_call = api.post("/v1/policies/default/evaluate", {"call": "run_command:ls\u0000; rm"})
    by_tool = api.post(
        "/v1/policies/default/evaluate",
        {"tool": "run_command", "arguments": {"command": "ls\u0000; rm"}},
    )

    assert (by_call.status_code, by_tool.status_code) == (400, 400)


def test_a_bundle_whose_yaml_escapes_a_nul_is_refused(org, admin_user, login):
    text = ZSH_BUNDLE.replace("cwd: /workspace", 'cwd: "/workspace\\0x"')

    response = login(admin_user).post(
        reverse("admin:governance_capabilitybundle_add"), {"org": org.pk, "content": text}
    )

    assert response.status_code == 200
    assert "NUL characters" in response.content.decode()
    assert not BundleTool.objects.filter(name="zsh_command").exists()


def _decision_segments(call_id: str) -> list:
    call = ToolCall.objects.get(tool_call_id=call_id)
    event = Event.objects.get(run_id=call.run_id, type="tool.decision", data__tool_call_id=call_id)
    return event.data["segments"]


def test_a_command_sent_again_gets_its_own_runs_policy_version_not_a_remembered_answer(
    org, make_run
):
    # Each worker remembers how a command text read under a compiled policy version: the
    # same text under a newer version, or in another run, must still be decided afresh.
    command = {"command": "git status && ls -la /workspace"}
    first_run, first_runner = make_run()
    assert ask(first_runner, first_run, "run_command", command, call_id="a-1")["decision"] == (
        "allow"
    )
    assert ask(first_runner, first_run, "run_command", command, call_id="a-2")["decision"] == (
        "allow"
    )
    assert _decision_segments("a-2") == _decision_segments("a-1")  # the same record, twice

    text = TEST_POLICY.replace(
        "rules:\n", 'rules:\n  - pattern: "run_command:ls -la *"\n    action: NEVER\n', 1
    )
    policy_save(org=org, text=text, author=None)
    second_run, second_runner = make_run()

    denied = ask(second_runner, second_run, "run_command", command, call_id="b-1")
    assert (denied["decision"], denied["rule"]["pattern"]) == ("deny", "run_command:ls -la *")
    segments = _decision_segments("b-1")
    assert {"subject": "run_command:ls -la /workspace", "verdict": "NEVER", "rule_index": 1} in (
        segments
    )
    # The first run keeps the version it froze, whatever the worker read since.
    assert ask(first_runner, first_run, "run_command", command, call_id="a-3")["decision"] == (
        "allow"
    )
