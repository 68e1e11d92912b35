"""An agent secret the sandbox sends back is masked by whichever process receives it.

The redactor masks the plaintexts its process has registered. A secret served to a sandbox
by one web process lives on there: the agent may echo it in a later call that another
process answers, or the same process after a restart, neither of which has unsealed it.
The attack: a runner puts its organization's agent secret, as plain text, in a call's
arguments (`echo <secret>`). The secret must appear in no ledger event, no response and no
log line; only the governance record of the call (`ToolCall.arguments`) keeps the call as
made, as for every argument (SPEC §4).
"""

import uuid

import httpx
import pytest

from governance.services.agent_secrets import agent_secret_set
from ledger.models import Event
from ledger.redaction import secret_registry
from tests.conftest import run_body
from tests.support.servers import WebServer


def echo_call(call_id: str, secret: str) -> dict:
    return {
        "session_id": "s-1",
        "tool_call_id": call_id,
        "tool": "run_command",
        "arguments": {"command": f"echo {secret} > /workspace/out"},
    }


def ledger_text(run_id) -> str:
    return "\n".join(str(data) for data in Event.objects.filter(run_id=run_id).values_list("data"))


def new_secret() -> str:
    # Nothing about it looks like a secret: only the vault's word makes it one.
    return f"plainword{uuid.uuid4().hex}"


@pytest.mark.django_db
def test_a_secret_this_process_never_unsealed_is_masked_when_the_sandbox_echoes_it(
    org, operator, make_run
):
    secret = new_secret()
    agent_secret_set(org=org, name="DEPLOY_TOKEN", value=secret)
    assert secret not in secret_registry.snapshot()  # sealed here, never unsealed
    run_id, runner = make_run()

    response = runner.post(f"/v1/runs/{run_id}/permission", echo_call("c-1", secret))

    assert response.status_code == 200, response.content
    assert secret not in response.content.decode()
    ledger = ledger_text(run_id)
    assert "echo [redacted] > /workspace/out" in ledger
    assert secret not in ledger


@pytest.mark.django_db
def test_a_new_value_set_after_the_process_registered_the_old_one_is_masked_too(
    org, operator, make_run
):
    first, second = new_secret(), new_secret()
    agent_secret_set(org=org, name="DEPLOY_TOKEN", value=first)
    run_id, runner = make_run()
    assert runner.post(f"/v1/runs/{run_id}/permission", echo_call("c-1", first)).status_code == 200

    agent_secret_set(org=org, name="DEPLOY_TOKEN", value=second)  # the admin replaces it
    response = runner.post(f"/v1/runs/{run_id}/permission", echo_call("c-2", second))

    assert response.status_code == 200, response.content
    ledger = ledger_text(run_id)
    assert first not in ledger
    assert second not in ledger
    assert ledger.count("echo [redacted] > /workspace/out") >= 2


@pytest.mark.slow
def test_fresh_web_processes_mask_a_secret_the_sandbox_kept_from_before(
    transactional_db, org, operator, tmp_path
):
    """Against gunicorn with two workers that have never unsealed anything (as after a
    restart): every call echoing the secret, whichever worker answers it, is masked."""
    secret = new_secret()
    agent_secret_set(org=org, name="DEPLOY_TOKEN", value=secret)
    created = operator.post("/v1/runs", run_body())
    assert created.status_code == 201, created.content
    run_id, token = created.json()["id"], created.json()["session_token"]
    headers = {"Authorization": f"Bearer {token}"}

    with WebServer(tmp_path, workers=2, threads=4) as server:
        for index in range(12):
            response = httpx.post(
                f"{server.url}/v1/runs/{run_id}/permission",
                json=echo_call(f"c-{index}", secret),
                headers=headers,
                timeout=60,
            )
            assert response.status_code == 200, response.text
            assert secret not in response.text
        log = server.log()

    ledger = ledger_text(run_id)
    assert ledger.count("echo [redacted] > /workspace/out") >= 12
    assert secret not in ledger
    assert secret not in log
