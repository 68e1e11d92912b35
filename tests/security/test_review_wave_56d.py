"""Review wave 56d: a connection's sealed credential, from the leak side.

An upstream MCP server (the configurable test server, run by the control plane over stdio)
quotes the credential it was handed in a JSON-RPC error. The broker words that error for the
agent, the ToolCall row and the `tool.brokered` event (`mcp_wire._describe`): it turned every
character a reader cannot see into a blank and collapsed the blanks *before* masking the
credential. A credential holding such a character (an emoji's variation selector U+FE0F, as a
phone keyboard types "❤️"; a soft hyphen; a zero-width joiner; a line break between short
words) was then no longer spelt as sent, so neither the credential nor any word of it
matched, and the credential reached the agent, the database and the ledger.
"""

import json
import shlex

import pytest

from governance.models import ToolCall
from ledger.models import Event
from tests.governance.broker.support import brokered_run, call
from tests.security.test_canary_credential import every_stored_value

pytestmark = pytest.mark.django_db

TAIL = "56d-canary-9f3c2a7be41d"
# A credential an env variable can hold (a password typed on a phone), spelt with a character
# `_visible` blanks that a Python repr keeps as it is (U+FE0F is a printable mark).
ENV_CREDENTIALS = {
    "emoji variation selector": f"hunter2-\u2764\ufe0f-{TAIL}",
}


def _stdio_connection(operator, echo_server, settings, secret: str) -> None:
    settings.FLUIDBOX_STDIO_COMMANDS = [shlex.join(echo_server.stdio_command)]
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


@pytest.mark.parametrize("case", list(ENV_CREDENTIALS))
def test_a_credential_with_an_invisible_character_quoted_in_an_error_reaches_no_one(
    broker_org, operator, echo_server, settings, caplog, case
):
    secret = ENV_CREDENTIALS[case]
    _stdio_connection(operator, echo_server, settings, secret)
    run_id, runner = brokered_run(operator)

    answer = call(
        runner, run_id, "crm.lookup", {"id": "1", "fail_echoing_credentials": True}, "c-1"
    )

    assert answer["broker"]["status"] == "failed"
    assert answer["result"]["isError"] is True
    # What a reader of each place sees, blanks and all: the credential with its invisible
    # character shown as a blank (or its lines joined by blanks) is the credential.
    shown = " ".join(secret.replace("\ufe0f", " ").split())
    seen = json.dumps(answer, ensure_ascii=False)
    stored_error = ToolCall.objects.get(run_id=run_id, tool_call_id="c-1").broker_error
    ledger = "\n".join(
        json.dumps(data, ensure_ascii=False)
        for data in Event.objects.filter(run_id=run_id).values_list("data", flat=True)
    )
    for place, text in {
        "answer": seen,
        "ToolCall.broker_error": stored_error,
        "ledger": ledger,
        "stored rows": every_stored_value(),
        "log": caplog.text,
    }.items():
        assert shown not in text, (place, text)
        assert secret not in text, (place, text)
    # The server did get it.
    received = [c.get("env", {}).get("CRM_DB_PASS") for c in echo_server.calls()]
    assert secret in received
