"""Review wave 56g: the vault and agent secrets, from the runner's and the operator's side.

1. While the vault is sealed (the processes started with a wrong or missing passphrase),
   a runner's `GET /v1/runs/{id}/secrets` for a call the gate allowed raised `VaultSealed`
   out of the view: a 500 "internal error" (with DEBUG on, Django's technical page), not
   the clear "vault sealed" refusal SPEC §7 asks for (as the brokered call and the
   credential forms already answer).
"""

import pytest

from governance import vault
from governance.models import AgentSecret
from governance.services.agent_secrets import agent_secret_set
from governance.services.policies import policy_save
from ledger.models import Event

pytestmark = pytest.mark.django_db

CANARY = "cnry56g-agentsecret-3b9f0c7e21"

MAIL_POLICY = """
name: mail
rules:
  - pattern: "send_email:*"
    action: ALWAYS
  - pattern: "read_file:*"
    action: ALWAYS
"""


def ledger_text(run_id) -> str:
    return "\n".join(str(data) for data in Event.objects.filter(run_id=run_id).values_list("data"))


def allowed_send_email(runner, run_id, call_id="c-1"):
    response = runner.post(
        f"/v1/runs/{run_id}/permission",
        {
            "session_id": "s-1",
            "tool_call_id": call_id,
            "tool": "send_email",
            "arguments": {"to": "ops@example.com"},
        },
    )
    assert response.status_code == 200, response.content
    assert response.json()["decision"] == "allow", response.content


def secrets_url(run_id, call_id="c-1", tool="send_email"):
    return f"/v1/runs/{run_id}/secrets?tool={tool}&session_id=s-1&tool_call_id={call_id}"


@pytest.fixture
def mail_org(org):
    policy_save(org=org, text=MAIL_POLICY, author=None)
    return org


def test_reading_secrets_while_the_vault_is_sealed_says_vault_sealed_not_500(
    mail_org, make_run, settings, caplog
):
    """Proves: a sealed vault makes the secrets read a clear 409 `vault_sealed` (fail
    closed, no plaintext, no 500), and the operator's log says why."""
    settings.FLUIDBOX_VAULT_PASSPHRASE = "correct horse battery staple"
    vault.reset_cache()
    agent_secret_set(org=mail_org, name="SMTP_TOKEN", value=CANARY)
    run_id, runner = make_run(policy="mail")
    allowed_send_email(runner, run_id)
    # The processes restart with a wrong passphrase: the vault is sealed.
    settings.FLUIDBOX_VAULT_PASSPHRASE = "wrong passphrase"
    vault.reset_cache()
    assert vault.tier2_status() == "sealed"
    runner.client.raise_request_exception = False

    response = runner.get(secrets_url(run_id))

    assert response.status_code == 409, response.content
    assert response.json()["error"] == "vault_sealed"
    assert "vault sealed" in response.json()["detail"]
    assert CANARY not in response.content.decode()
    assert CANARY not in ledger_text(run_id)
    # The operator reads why in the logs (secret reads have no ledger event type).
    assert "vault is sealed" in caplog.text
    assert CANARY not in caplog.text


# What held (no defect found; kept as regression guards).


def test_a_rotation_keeps_agent_secrets_served_and_dumpdata_holds_only_ciphertext(
    mail_org, make_run, capsys
):
    """Held: after `manage.py vault rotate` the runner still gets the secret (re-sealed
    under the new key), and neither the command's output nor `dumpdata` of the vault's
    tables (nor of the whole governance app) carries the plaintext."""
    from django.core.management import call_command

    agent_secret_set(org=mail_org, name="SMTP_TOKEN", value=CANARY)
    run_id, runner = make_run(policy="mail")
    allowed_send_email(runner, run_id)
    before = AgentSecret.objects.get().value_sealed

    call_command("vault", "rotate")
    call_command("dumpdata", "governance", "ledger")
    out = capsys.readouterr()

    assert AgentSecret.objects.get().value_sealed != before
    response = runner.get(secrets_url(run_id))
    assert response.status_code == 200, response.content
    assert response.json()["env"] == {"SMTP_TOKEN": CANARY}
    assert "rotated:" in out.out
    assert CANARY not in out.out + out.err
    assert AgentSecret.objects.get().value_sealed in out.out  # the dump did run
