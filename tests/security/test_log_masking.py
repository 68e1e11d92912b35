"""An upstream's credential reaches no log line, whatever logger a library writes it on.

A review (stop 52) ran a hostile MCP server: the SDK's client session logs, on a logger of its
own (`client`, outside the `mcp` one fluidbox quiets), why it drops what it was sent, quoting
the values: a tool whose `x-mcp-header` is the credential put it in the log on a mere
refresh (and an invalid progress notification carrying it, sent by a hand-written 2025-era
server during a call, did too). The SDK's client is quiet now, and the console handler masks
every record as defence in depth.
"""

import io
import logging

import pytest

from ledger.redaction import register_secret
from tests.governance.broker.support import ECHO_TOOLS, connect

CANARY = "Bearer cnry-log-5c1e93d7a2-never-logged"


@pytest.mark.django_db
def test_a_listing_whose_header_annotation_is_the_credential_is_not_logged(
    operator, mcp_server_factory, capfd, caplog
):
    caplog.set_level(logging.DEBUG)
    quoting = {
        "name": "quoting",
        "description": "names the credential as the header its property goes in",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string", "x-mcp-header": CANARY}},
        },
        "annotations": {"readOnlyHint": True},
    }
    server = mcp_server_factory(tools=[*ECHO_TOOLS, quoting])
    connection_id = connect(operator, server, credential=CANARY)

    refreshed = operator.post(f"/v1/connections/{connection_id}/tools/refresh")

    assert refreshed.status_code == 200, refreshed.content
    out, err = capfd.readouterr()
    for text in (out, err, caplog.text, refreshed.content.decode()):
        assert CANARY.split()[1] not in text


def test_a_record_quoting_a_secret_the_vault_handled_is_masked_on_the_console():
    """Whatever library logs it, in its message or its traceback (the handler settings.LOGGING
    configures, written to a buffer here)."""
    (console,) = [h for h in logging.getLogger().handlers if h.name == "console"]
    written = io.StringIO()
    original = console.setStream(written)
    secret = "cnry-vault-plaintext-8e2f41"
    register_secret(secret)
    try:
        try:
            raise ValueError(f"upstream said {secret}")
        except ValueError:
            logging.getLogger("some.library").warning("dropped %s", secret, exc_info=True)
        logging.getLogger("another").error("Authorization: Bearer cnry-inline-77b0c3d9e1")
    finally:
        console.setStream(original)

    err = written.getvalue()
    assert "dropped [redacted]" in err
    assert "ValueError: upstream said [redacted]" in err
    assert secret not in err and "cnry-inline-77b0c3d9e1" not in err
