"""Review wave 53b, secrets from the attacker's side: a connection's credential that a
hostile MCP server quotes back, spelt the way its own encoder spells it.

The broker masks the credential (and each word of it) in whatever the server answers before
the sandbox sees it (`mcp_wire._credential_values`), and the redactor masks every plaintext
the vault unsealed (`ledger.redaction.mask_secrets`). Both looked for the credential as it
is. A server that echoes it inside JSON (a tool result's text is very often `json.dumps`)
or inside a Python repr (an error message quoting the headers it got) doubles a backslash,
puts one before a double quote, spells a non-ASCII letter as an escape: the value no longer
matched, and the sandbox was handed the credential in a spelling that any JSON or Python
reader turns back into the credential itself. Now each of those spellings is masked too."""

import json
import shlex

import pytest

from ledger.models import Event
from tests.governance.broker.support import brokered_run, call, connect

pytestmark = pytest.mark.django_db

# Credentials an admin may well hold: a password with a backslash or a quote in it.
HEADER_CREDENTIALS = {
    "backslash": "Bearer canary\\53b-tail-one",
    "double quote": 'Bearer canary"53b-tail-two',
}


def sandbox_sees(answer: dict) -> str:
    """Everything of a brokered answer, as the sandbox's model can read it."""
    return json.dumps(answer, ensure_ascii=False)


def ledger_of(run_id) -> str:
    return "\n".join(
        json.dumps(data)
        for data in Event.objects.filter(run_id=run_id).values_list("data", flat=True)
    )


@pytest.mark.parametrize("case", list(HEADER_CREDENTIALS))
def test_a_credential_the_server_echoes_in_json_never_reaches_the_sandbox(
    broker_org, operator, echo_server, case
):
    credential = HEADER_CREDENTIALS[case]
    tail = credential.split("canary", 1)[1][1:]  # what follows the character JSON escapes
    connect(operator, echo_server, credential=credential)
    run_id, runner = brokered_run(operator)

    answer = call(runner, run_id, "crm.lookup", {"id": "1", "echo_credentials": True}, "c-1")

    assert answer["decision"] == "allow"
    assert answer["broker"]["status"] == "succeeded"
    seen = sandbox_sees(answer)
    assert tail not in seen, seen
    assert tail not in ledger_of(run_id)
    # The server did get it (the echo is of what it received).
    received = [c["headers"].get("authorization") for c in echo_server.calls()]
    assert credential in received


def test_a_credential_an_upstream_error_quotes_in_a_repr_never_reaches_the_sandbox(
    broker_org, operator, echo_server
):
    credential = HEADER_CREDENTIALS["backslash"]
    tail = credential.split("canary", 1)[1][1:]
    connect(operator, echo_server, credential=credential)
    run_id, runner = brokered_run(operator)

    answer = call(
        runner, run_id, "crm.lookup", {"id": "1", "fail_echoing_credentials": True}, "c-1"
    )

    assert answer["broker"]["status"] == "failed"
    assert answer["result"]["isError"] is True
    seen = sandbox_sees(answer)
    assert tail not in seen, seen
    assert tail not in ledger_of(run_id)


def test_a_stdio_env_credential_with_a_non_ascii_letter_is_masked_in_its_json_spelling(
    broker_org, operator, echo_server, settings
):
    settings.FLUIDBOX_STDIO_COMMANDS = [shlex.join(echo_server.stdio_command)]
    secret = "pässwörd-53b-tail-three"
    created = operator.post(
        "/v1/connections",
        {
            "slug": "crm",
            "kind": "shared",
            "transport": "stdio",
            "command": echo_server.stdio_command,
            "credential": {"env": "CRM_DB_PASS", "value": secret},
        },
    )
    assert created.status_code == 201, created.content
    refreshed = operator.post(f"/v1/connections/{created.json()['id']}/tools/refresh")
    assert refreshed.status_code == 200, refreshed.content
    run_id, runner = brokered_run(operator)

    answer = call(runner, run_id, "crm.lookup", {"id": "1", "echo_credentials": True}, "c-1")

    assert answer["broker"]["status"] == "succeeded"
    # The server's echo is `json.dumps(...)`: `p\\u00e4ssw\\u00f6rd-…`, read back as the secret.
    for text in (item.get("text", "") for item in answer["result"]["content"]):
        try:
            decoded = json.dumps(json.loads(text), ensure_ascii=False)
        except ValueError:
            decoded = text
        assert secret not in decoded, decoded
    assert "53b-tail-three" not in json.dumps(answer)
