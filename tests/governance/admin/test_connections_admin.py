"""Connections in the portal: create, refresh (photograph and drift), revoke, through the
services; the credential goes in and never comes back out."""

import pytest
from django.urls import reverse

from governance.models import Connection
from tests.governance.broker.support import ECHO_TOOLS

pytestmark = pytest.mark.django_db

CREDENTIAL = "Bearer portal-canary-41b2"


def create(client, org, server, **overrides):
    data = {
        "org": org.pk,
        "slug": "crm",
        "kind": "shared",
        "owner": "",
        "transport": "streamable-http",
        "url": server.url if server else "http://127.0.0.1:9/mcp",
        "command": "",
        "credential_placement": "header",
        "credential_name": "Authorization",
        "credential_value": CREDENTIAL,
        **overrides,
    }
    return client.post(reverse("admin:governance_connection_add"), data)


def act(client, connection, action):
    url = reverse("admin:governance_connection_action", args=[connection.pk, action])
    return client.post(url, follow=True)


def test_an_admin_creates_refreshes_and_sees_the_drift(org, admin_user, login, mcp_server_factory):
    server = mcp_server_factory(tools=[dict(t) for t in ECHO_TOOLS])
    client = login(admin_user)
    response = create(client, org, server)
    assert response.status_code == 302
    connection = Connection.objects.get(org=org, slug="crm")
    page = act(client, connection, "refresh").content.decode()
    assert "Photographed 2 tools" in page
    assert "<code>crm.lookup</code>" in page and "<code>crm.update</code>" in page

    changed = [dict(ECHO_TOOLS[0]), {**ECHO_TOOLS[1], "description": "Now deletes records"}]
    changed.append({"name": "purge", "inputSchema": {"type": "object"}})
    server.set_tools(changed)
    page = act(client, connection, "refresh").content.decode()
    drift = page.split('id="drift"', 1)[1].split("</div>", 1)[0]
    assert "Drift since the previous photograph" in page
    assert "added</span> <code>purge</code>" in drift
    assert "changed</span> <code>update</code>" in drift
    assert "portal-canary-41b2" not in page
    received = [r["headers"].get("authorization") for r in server.requests()]
    assert CREDENTIAL in received


def test_a_refresh_that_fails_upstream_is_a_clear_error(org, admin_user, login):
    client = login(admin_user)
    create(client, org, None)
    connection = Connection.objects.get(slug="crm")
    response = client.post(
        reverse("admin:governance_connection_action", args=[connection.pk, "refresh"])
    )
    assert response.status_code == 409
    assert "Refused (409): the MCP server did not answer tools/list" in response.content.decode()


def test_an_admin_revokes_and_the_connection_refuses(org, admin_user, login):
    client = login(admin_user)
    create(client, org, None)
    connection = Connection.objects.get(slug="crm")
    page = act(client, connection, "revoke").content.decode()
    assert "Revoked" in page
    connection.refresh_from_db()
    assert connection.status == "revoked"


def test_a_member_creates_their_own_personal_connection_but_not_a_shared_one(org, member, login):
    client = login(member)
    refused = create(client, org, None)
    assert refused.status_code == 400
    assert "Refused (403): you may not create this connection" in refused.content.decode()
    assert CREDENTIAL not in refused.content.decode()
    assert create(client, org, None, slug="mine", kind="personal", owner="mo").status_code == 302
    assert Connection.objects.get(slug="mine").owner.username == "mo"


def test_an_auditor_may_not_add_a_connection(org, auditor, login):
    client = login(auditor)
    assert client.get(reverse("admin:governance_connection_add")).status_code == 403
    assert create(client, org, None).status_code == 403
    assert not Connection.objects.exists()
