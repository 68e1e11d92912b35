"""stdio connections (allow-listed commands only) and a sealed vault."""

import shlex

import pytest

from governance import vault
from governance.models import Connection
from tests.governance.broker.support import brokered_run, call

pytestmark = pytest.mark.django_db


def stdio_body(command, slug="local"):
    return {
        "slug": slug,
        "kind": "shared",
        "transport": "stdio",
        "command": list(command),
        "credential": {"env": "CRM_TOKEN", "value": "stdio-secret-9"},
    }


def test_a_stdio_command_outside_the_allow_list_is_refused(broker_org, operator, echo_server):
    response = operator.post("/v1/connections", stdio_body(echo_server.stdio_command))
    assert response.status_code == 400
    assert "allow-list" in response.json()["detail"]
    response = operator.post("/v1/connections", stdio_body(["/bin/sh", "-c", "id > /tmp/pwned"]))
    assert response.status_code == 400
    # The refusal says where the allow-list is, and the entry that would admit the command.
    assert "FLUIDBOX_STDIO_COMMANDS must hold it exactly" in response.json()["detail"]
    assert "\"/bin/sh -c 'id > /tmp/pwned'\"" in response.json()["detail"]
    assert not Connection.objects.exists()


def test_an_allow_listed_stdio_server_is_photographed_and_called_with_its_env_credential(
    broker_org, operator, echo_server, settings
):
    settings.FLUIDBOX_STDIO_COMMANDS = [shlex.join(echo_server.stdio_command)]
    from governance.services.policies import policy_save

    policy_save(
        org=broker_org,
        text='name: default\nrules:\n  - {pattern: "local.*", action: ALWAYS}\n',
        author=None,
    )
    created = operator.post("/v1/connections", stdio_body(echo_server.stdio_command))
    assert created.status_code == 201, created.content
    connection_id = created.json()["id"]
    refreshed = operator.post(f"/v1/connections/{connection_id}/tools/refresh")
    assert refreshed.status_code == 200, refreshed.content
    run_id, runner = brokered_run(operator, slug="local")
    answer = call(runner, run_id, "local.lookup", {"id": "7"})
    assert answer["decision"] == "allow"
    assert answer["result"]["isError"] is False
    stdio_calls = [c for c in echo_server.calls() if c.get("transport") == "stdio"]
    assert stdio_calls and stdio_calls[-1]["env"]["CRM_TOKEN"] == "stdio-secret-9"
    assert "stdio-secret-9" not in str(answer)


def test_a_sealed_vault_denies_brokered_calls_with_binding(
    broker_org, operator, echo_server, settings
):
    from tests.governance.broker.support import connect

    settings.FLUIDBOX_VAULT_PASSPHRASE = "correct horse battery staple"
    vault.reset_cache()
    connect(operator, echo_server)
    run_id, runner = brokered_run(operator)
    # The processes restart with a wrong passphrase: tier 2 cannot be unwrapped.
    settings.FLUIDBOX_VAULT_PASSPHRASE = "wrong passphrase"
    vault.reset_cache()
    assert vault.tier2_status() == "sealed"
    answer = call(runner, run_id, "crm.lookup", {"id": "1"})
    assert (answer["decision"], answer["source"], answer["reason"]) == (
        "deny",
        "binding",
        "vault sealed",
    )
    assert echo_server.calls() == []
    settings.FLUIDBOX_VAULT_PASSPHRASE = "correct horse battery staple"
    vault.reset_cache()
    assert vault.tier2_status() == "unsealed"
    assert call(runner, run_id, "crm.lookup", {"id": "1"}, "c-2")["decision"] == "allow"


def test_without_a_passphrase_the_vault_falls_back_to_the_machine_key(broker_org):
    assert vault.tier2_status() == "machine-key"
    token = vault.seal_secret("plain")
    assert "plain" not in token
    assert vault.unseal_secret(token) == "plain"


def test_the_machine_key_file_is_created_with_mode_0600(settings, tmp_path):
    settings.FLUIDBOX_MACHINE_KEY = None
    settings.FLUIDBOX_MACHINE_KEY_FILE = str(tmp_path / "machine.key")
    token = vault.seal_infrastructure("webhook-secret")
    assert (tmp_path / "machine.key").stat().st_mode & 0o777 == 0o600
    assert vault.unseal_infrastructure(token) == "webhook-secret"
