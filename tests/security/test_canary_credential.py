"""A planted canary credential travels only where it must: to the MCP server."""

import logging

import pytest
from django.apps import apps
from django.db import connection

from governance.models import Approval
from tests.conftest import Api
from tests.governance.broker.support import brokered_run, call, connect

CANARY = "Bearer canary-3b7d1f0c9e-never-anywhere"


def every_stored_value() -> str:
    """Every column of every row of every table, as text."""
    chunks = []
    for model in apps.get_models():
        for row in model._base_manager.all().values():
            chunks.append(repr(row))
    with connection.cursor() as cursor:
        tables = connection.introspection.table_names(cursor)
        for table in tables:
            cursor.execute(f'SELECT * FROM "{table}"')
            chunks.extend(repr(row) for row in cursor.fetchall())
    return "\n".join(chunks)


@pytest.mark.django_db
def test_the_canary_credential_is_only_in_what_the_mcp_server_received(
    broker_org, operator, echo_server, approver, caplog, capfd
):
    from governance.services.policies import policy_save

    caplog.set_level(logging.DEBUG)
    responses = []

    def record(response):
        responses.append(response.content.decode(errors="replace"))
        return response

    connection_id = connect(operator, echo_server, credential=CANARY)
    responses.append(str(operator.get(f"/v1/connections/{connection_id}").json()))
    # A policy that asks for updates, so an approval is part of the story.
    policy_save(
        org=broker_org,
        text='name: default\nrules:\n  - {pattern: "crm.lookup:*", action: ALWAYS}\n',
        author=None,
    )
    run_id, runner = brokered_run(operator)
    responses.append(str(call(runner, run_id, "crm.lookup", {"id": "1"}, "c-1")))
    pending = call(runner, run_id, "crm.update", {"id": "1", "value": "v"}, "c-2")
    responses.append(str(pending))
    assert pending["decision"] == "pending"
    approval = Approval.objects.get(run_id=run_id)
    approver_api = Api(user=approver)
    record(approver_api.get("/v1/approvals?status=pending"))
    record(approver_api.post(f"/v1/approvals/{approval.pk}/decision", {"decision": "approve"}))
    responses.append(str(call(runner, run_id, "crm.update", {"id": "1", "value": "v"}, "c-2")))
    # An error path: the server goes away mid-run.
    echo_server.stop()
    responses.append(str(call(runner, run_id, "crm.lookup", {"id": "2"}, "c-3")))
    record(runner.get(f"/v1/runs/{run_id}/events?limit=1000"))
    record(operator.get(f"/v1/runs/{run_id}"))
    record(
        operator.post(
            f"/v1/connections/{connection_id}/reconnect",
            {"credential": {"header": "Authorization", "value": CANARY + "-2"}},
        )
    )

    secret = CANARY.split(" ", 1)[1]
    assert all(secret not in text for text in responses)
    assert secret not in every_stored_value()
    assert secret not in caplog.text
    out, err = capfd.readouterr()
    assert secret not in out and secret not in err
    received = [c["headers"].get("authorization") for c in echo_server.calls()]
    assert CANARY in received
