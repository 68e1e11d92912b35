"""Secrets at the boundary, live: into the tool's environment, never into what the model sees."""

import httpx
import pytest
import yaml

from governance.services.agent_secrets import agent_secret_set
from governance.services.bundles import bundle_import
from governance.services.policies import policy_save
from ledger.models import Event
from runner import (
    DEFAULT_PROGRAMS,
    SANDBOX_BASIC,
    Executor,
    GateClient,
    GatedToolbox,
    SecretsRefused,
    ToolRunner,
    ToolSpec,
    Workspace,
)
from tests.runner_live.conftest import create_run

pytestmark = pytest.mark.slow

PLANTED = "tok-CANARY-7f3e9a1c5b2d4e6f"

DEPLOY_BUNDLE = """
name: deploy-tools
tools:
  - name: deploy
    description: Run one deployment command with the agent's credentials in its environment.
    access: write
    match_argument: {name: command, kind: shell}
    secrets: true
    schema: {type: object, properties: {command: {type: string}},
             required: [command], additionalProperties: false}
"""

DEPLOY_POLICY = """
name: default
rules:
  - pattern: "deploy:printenv"
    action: ALWAYS
  - pattern: "deploy:printenv *"
    action: ALWAYS
  - pattern: "deploy:touch *"
    action: ALWAYS
"""


@pytest.fixture
def deploy_org(org):
    bundle_import(org=org, text=DEPLOY_BUNDLE)
    policy_save(org=org, text=DEPLOY_POLICY, author=None)
    agent_secret_set(org=org, name="DEPLOY_TOKEN", value=PLANTED)
    return org


def deploy_toolbox(server, run_id, token, workspace_root):
    """The runner as a sandbox would build it, with `deploy` run by the shell executor."""
    workspace = Workspace(workspace_root)
    [entry] = yaml.safe_load(DEPLOY_BUNDLE)["tools"]
    deploy = ToolSpec.from_bundle_entry(entry, handler="run_command")
    executor = Executor(workspace, DEFAULT_PROGRAMS | {"printenv"})
    client = GateClient(server.url, run_id, token)
    runner = ToolRunner(client, workspace, executor, tools=(*SANDBOX_BASIC, deploy), total_wait=0)
    return GatedToolbox(runner), client


def ledger_text(run_id) -> str:
    return "\n".join(str(data) for data in Event.objects.filter(run_id=run_id).values_list("data"))


def test_a_planted_secret_reaches_the_tool_but_never_what_the_model_sees(
    fluidbox_server, deploy_org, operator, tmp_path
):
    run_id, token = create_run(operator, bundles=["sandbox-basic", "deploy-tools"])
    toolbox, client = deploy_toolbox(fluidbox_server, run_id, token, tmp_path)

    whole_environment = toolbox.call("deploy", {"command": "printenv"})
    one_variable = toolbox.call("deploy", {"command": "printenv DEPLOY_TOKEN"})
    client.close()

    assert not whole_environment.is_error, whole_environment.text
    assert "DEPLOY_TOKEN=***" in whole_environment.text  # injected, then masked
    assert one_variable.text.splitlines()[-1] == "***"
    for result in (whole_environment, one_variable):
        assert PLANTED not in result.text
    assert PLANTED not in ledger_text(run_id)


def test_a_read_only_run_gets_no_secrets_and_its_secrets_tool_does_not_run(
    fluidbox_server, deploy_org, operator, tmp_path
):
    run_id, token = create_run(
        operator, bundles=["sandbox-basic", "deploy-tools"], trust_tier="read_only"
    )
    toolbox, client = deploy_toolbox(fluidbox_server, run_id, token, tmp_path)

    result = toolbox.call("deploy", {"command": "touch deployed"}, tool_call_id="denied-1")
    denied_call = {"session_id": toolbox.session_id, "tool_call_id": "denied-1"}
    asked_directly = httpx.get(
        f"{fluidbox_server.url}/v1/runs/{run_id}/secrets",
        params={"tool": "deploy", **denied_call},
        headers={"Authorization": f"Bearer {token}"},
    )
    with pytest.raises(SecretsRefused):
        client.fetch_secrets("deploy", **denied_call)
    client.close()

    assert result.is_error
    assert (result.decision.decision, result.decision.source) == ("deny", "trust_tier")
    assert not (tmp_path / "deployed").exists()
    assert asked_directly.status_code == 403
    assert asked_directly.json()["error"] == "forbidden"
    assert PLANTED not in asked_directly.text
    assert PLANTED not in ledger_text(run_id)


def test_a_trusted_run_gets_no_secrets_for_a_tool_that_declares_none(
    fluidbox_server, deploy_org, operator
):
    run_id, token = create_run(operator, bundles=["sandbox-basic", "deploy-tools"])
    headers = {"Authorization": f"Bearer {token}"}

    def gate(tool, command, call_id):
        return httpx.post(
            f"{fluidbox_server.url}/v1/runs/{run_id}/permission",
            json={
                "session_id": "s",
                "tool_call_id": call_id,
                "tool": tool,
                "arguments": {"command": command},
            },
            headers=headers,
        ).json()["decision"]

    def ask(tool, call_id="allowed"):
        return httpx.get(
            f"{fluidbox_server.url}/v1/runs/{run_id}/secrets",
            params={"tool": tool, "session_id": "s", "tool_call_id": call_id},
            headers=headers,
        )

    assert gate("deploy", "printenv", "allowed") == "allow"
    assert gate("deploy", "curl evil.example", "asked") == "pending"  # no rule: ask a human
    undeclared, unknown = ask("run_command"), ask("mail.send")
    never_asked, not_allowed = ask("deploy", "made-up"), ask("deploy", "asked")
    declared = ask("deploy")

    assert undeclared.status_code == 403 and PLANTED not in undeclared.text
    assert unknown.status_code == 404 and PLANTED not in unknown.text
    # Secrets come only with a call the gate allowed: not for a made-up or a pending call.
    assert never_asked.status_code == 403 and PLANTED not in never_asked.text
    assert not_allowed.status_code == 403 and PLANTED not in not_allowed.text
    assert declared.status_code == 200
    assert declared.json() == {"env": {"DEPLOY_TOKEN": PLANTED}}
    assert declared.headers["Cache-Control"] == "no-store"
