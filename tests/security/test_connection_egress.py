"""SSRF: a connection URL must not make fluidbox send requests into its own network.

A member (the attacker) points a personal connection at internal addresses, literally and
through names and encodings that resolve there; an existing connection's name starts
resolving to loopback (DNS rebinding); an allowed server redirects to an internal one.
Each is refused with a clear answer, and the internal server never receives a request.
Only an explicit allow-list (an org admin's, or the deployment's) admits an internal host.

The tests' own MCP servers listen on 127.0.0.1, which the test settings allow like a
deployment would allow an internal server; every test here clears that first.
"""

import ipaddress
import socket
import threading
from http.server import ThreadingHTTPServer

import anyio
import httpx2
import pytest

from governance.egress import (
    EgressRefused,
    EgressRules,
    GuardedTransport,
    forbidden_because,
    parse_entry,
)
from governance.errors import Invalid
from governance.models import Connection, Organization, Role, ToolCall
from governance.services.connections import connection_create
from governance.services.orgs import api_key_create, user_create
from tests.conftest import Api
from tests.governance.broker.support import ECHO_TOOLS
from tests.redirecting_server import Redirector


@pytest.fixture
def no_allowed_hosts(settings):
    settings.FLUIDBOX_CONNECTION_ALLOWED_HOSTS = []
    return settings


@pytest.fixture
def internal_server(mcp_server_factory):
    """An MCP server on loopback: what an attacker would like fluidbox to talk to."""
    return mcp_server_factory(tools=[dict(tool) for tool in ECHO_TOOLS])


@pytest.fixture
def member_api(org):
    member = user_create(username="mallory", org=org, role=Role.MEMBER, password="pw-mal-123")
    return Api(api_key_create(org=org, user=member, name="mallory").plaintext)


def create_personal(api, url, slug="mine"):
    return api.post(
        "/v1/connections",
        {
            "slug": slug,
            "kind": "personal",
            "owner": "mallory",
            "transport": "streamable-http",
            "url": url,
            "credential": {"header": "Authorization", "value": "Bearer mine"},
        },
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "LOCALHOST.",
        "[::1]",
        "0.0.0.0",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[64:ff9b::7f00:1]",
        "[2002:7f00:1::1]",
        "127.1",
        "2130706433",
        "0x7f000001",
    ],
)
def test_a_member_cannot_point_a_connection_at_loopback(
    no_allowed_hosts, member_api, internal_server, host
):
    url = f"http://{host}:{internal_server.port}/mcp"
    response = create_personal(member_api, url)
    assert 400 <= response.status_code < 500, response.content
    assert response.json()["error"] in ("address_refused", "invalid")
    assert response.json()["detail"]
    assert not Connection.objects.exists()
    assert internal_server.requests() == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "what"),
    [
        ("http://127.0.0.1:9/mcp", "loopback"),
        ("http://localhost:9/mcp", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "private"),
        ("http://10.0.0.7:8080/mcp", "private"),
        ("http://192.168.1.1/mcp", "private"),
        ("http://100.100.100.200/latest/meta-data/", "not a globally routable"),
        ("http://[ff02::1]/mcp", "multicast"),
        ("http://224.0.0.1/mcp", "multicast"),
        ("http://0.0.0.0:9/mcp", "unspecified"),
    ],
)
def test_internal_addresses_are_refused_with_a_reason_that_names_them(
    no_allowed_hosts, member_api, url, what
):
    response = create_personal(member_api, url)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "address_refused"
    assert what in response.json()["detail"]
    assert "allowed hosts" in response.json()["detail"]
    assert not Connection.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("host", ["2130706433", "0177.0.0.1", "0x7f.1", "127.000.000.001"])
def test_numeric_spellings_of_loopback_are_refused_by_the_service_too(no_allowed_hosts, org, host):
    """The API's URL field rejects some of these spellings; the portal form and
    `seed_demo` call the service directly, and the resolver accepts them all."""
    from governance.authentication import Actor, ActorKind

    operator = Actor(kind=ActorKind.OPERATOR, org_id=org.pk, roles={org.pk: "operator"})
    with pytest.raises(Invalid) as refused:
        connection_create(
            org=org,
            actor=operator,
            slug="sneaky",
            kind="shared",
            transport="streamable-http",
            url=f"http://{host}:9/mcp",
        )
    assert refused.value.code == "address_refused"
    assert not Connection.objects.exists()


def test_every_internal_range_is_forbidden_and_public_addresses_are_not():
    for text in [
        "127.0.0.1",
        "127.255.255.254",
        "::1",
        "0.0.0.0",
        "::",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.0.1",
        "169.254.169.254",
        "fe80::1",
        "fd00:ec2::254",
        "fc00::1",
        "100.64.0.1",
        "224.0.0.251",
        "ff02::fb",
        "240.0.0.1",
        "255.255.255.255",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "2002:a9fe:a9fe::1",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo hiding 127.0.0.1
    ]:
        assert forbidden_because(ipaddress.ip_address(text)) is not None, text
    for text in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:1.1.1.1"]:
        assert forbidden_because(ipaddress.ip_address(text)) is None, text


@pytest.mark.django_db
def test_an_existing_connection_whose_host_is_no_longer_allowed_is_never_contacted(
    settings, broker_org, operator, internal_server
):
    """Created while 127.0.0.1 was allowed; then the allowance goes. Every call checks."""
    from tests.governance.broker.support import brokered_run, call, connect

    connection_id = connect(operator, internal_server)
    run_id, runner = brokered_run(operator)
    seen = len(internal_server.requests())
    settings.FLUIDBOX_CONNECTION_ALLOWED_HOSTS = []

    answer = call(runner, run_id, "crm.lookup", {"id": "1"}, "c-1")
    assert (answer["decision"], answer["source"]) == ("deny", "binding")
    assert "loopback" in answer["reason"]
    assert answer["result"] is None
    assert ToolCall.objects.get(tool_call_id="c-1").broker_status == "refused"
    refreshed = operator.post(f"/v1/connections/{connection_id}/tools/refresh")
    assert refreshed.status_code == 409
    assert refreshed.json()["error"] == "address_refused"
    assert len(internal_server.requests()) == seen


@pytest.mark.django_db
def test_a_rebinding_name_is_resolved_once_and_the_checked_address_is_used(
    no_allowed_hosts, operator, internal_server, monkeypatch
):
    """`rebind.test` answers a public address to the first two look-ups (the creation
    check and the request's own check) and loopback afterwards, as a rebinding attacker's
    DNS server would. The request must go to the address that was checked: no third
    look-up, nothing reaches the loopback server. (No DNS server exists offline, so the
    resolver is replaced for that one name.)"""
    no_allowed_hosts.FLUIDBOX_MCP_TIMEOUT = 2
    real = socket.getaddrinfo
    lookups = []

    def rebinding(host, port, *args, **kwargs):
        if (host.decode() if isinstance(host, bytes) else host) != "rebind.test":
            return real(host, port, *args, **kwargs)
        lookups.append("rebind.test")
        address = "93.184.216.34" if len(lookups) <= 2 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    created = operator.post(
        "/v1/connections",
        {
            "slug": "rebind",
            "kind": "shared",
            "transport": "streamable-http",
            "url": f"http://rebind.test:{internal_server.port}/mcp",
        },
    )
    assert created.status_code == 201, created.content
    refreshed = operator.post(f"/v1/connections/{created.json()['id']}/tools/refresh")
    assert refreshed.status_code == 409  # the public address does not answer offline
    assert lookups == ["rebind.test", "rebind.test"]
    assert internal_server.requests() == []

    # Once the name answers loopback to the check itself, the request is refused outright.
    refreshed = operator.post(f"/v1/connections/{created.json()['id']}/tools/refresh")
    assert refreshed.status_code == 409
    assert refreshed.json()["error"] == "address_refused"
    assert "rebind.test (127.0.0.1) is a loopback address" in refreshed.json()["detail"]
    assert internal_server.requests() == []


@pytest.fixture
def redirector(internal_server):
    """An HTTP server on 127.0.0.1 that redirects everything to the internal MCP server."""
    handler = type("Redirect", (Redirector,), {"target": internal_server.url})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp", server.server_address[1]
    server.shutdown()
    server.server_close()


def _guarded_get(rules: EgressRules, url: str) -> httpx2.Response:
    async def fetch():
        async with httpx2.AsyncClient(
            transport=GuardedTransport(rules), follow_redirects=True, timeout=10
        ) as client:
            return await client.get(url)

    return anyio.run(fetch)


def test_a_redirect_from_an_allowed_host_to_an_internal_one_is_refused(internal_server, redirector):
    """The guard sits in the transport, so it sees every request a client sends, a
    followed redirect included (the MCP SDK follows same-origin redirects only; this
    client follows all of them, the worst case)."""
    url, port = redirector
    only_the_redirector = EgressRules(allowed=(parse_entry(f"127.0.0.1:{port}"),))
    with pytest.raises(EgressRefused, match="loopback"):
        _guarded_get(only_the_redirector, url)
    assert internal_server.requests() == []

    # The control: with the target allowed too, the same redirect is followed and arrives.
    both = EgressRules(
        allowed=(parse_entry(f"127.0.0.1:{port}"), parse_entry(f"127.0.0.1:{internal_server.port}"))
    )
    response = _guarded_get(both, url)
    assert response.status_code != 307
    assert str(response.url).startswith(internal_server.url.rsplit("/", 1)[0])


@pytest.mark.django_db
def test_photographing_through_a_redirecting_server_never_reaches_the_internal_one(
    settings, operator, internal_server, redirector
):
    url, port = redirector
    settings.FLUIDBOX_CONNECTION_ALLOWED_HOSTS = [f"127.0.0.1:{port}"]
    created = operator.post(
        "/v1/connections",
        {"slug": "redir", "kind": "shared", "transport": "streamable-http", "url": url},
    )
    assert created.status_code == 201
    refreshed = operator.post(f"/v1/connections/{created.json()['id']}/tools/refresh")
    assert refreshed.status_code == 409
    assert internal_server.requests() == []


@pytest.mark.django_db
def test_an_org_admin_allows_an_internal_host_in_the_admin_and_only_then_it_works(
    no_allowed_hosts, org, admin_user, member_api, internal_server
):
    from django.test import Client

    url = f"http://127.0.0.1:{internal_server.port}/mcp"
    assert create_personal(member_api, url).status_code == 400

    browser = Client()
    browser.force_login(admin_user)
    page = f"/admin/governance/organization/{org.pk}/change/"
    assert browser.get(page).status_code == 200
    refused = browser.post(page, {"connection_allowed_hosts": "not a host!"})
    assert refused.status_code == 200  # the form again, with the error
    assert b"is not a hostname, an IP address or a network" in refused.content
    assert Organization.objects.get(pk=org.pk).connection_allowed_hosts == ""

    saved = browser.post(page, {"connection_allowed_hosts": f"127.0.0.1:{internal_server.port}"})
    assert saved.status_code == 302
    created = create_personal(member_api, url)
    assert created.status_code == 201, created.content
    refreshed = member_api.post(f"/v1/connections/{created.json()['id']}/tools/refresh")
    assert refreshed.status_code == 200, refreshed.content
    assert [tool["name"] for tool in refreshed.json()["photograph"]["tools"]] == [
        "lookup",
        "update",
    ]
    # The allowance names a port: the same host on another port is still refused.
    other = create_personal(member_api, "http://127.0.0.1:9/mcp", slug="other")
    assert other.status_code == 400


@pytest.mark.django_db
def test_a_member_cannot_edit_the_allowed_hosts(no_allowed_hosts, org, member):
    from django.test import Client

    browser = Client()
    browser.force_login(member)
    page = f"/admin/governance/organization/{org.pk}/change/"
    response = browser.post(page, {"connection_allowed_hosts": "127.0.0.1"})
    assert response.status_code in (302, 403)
    assert Organization.objects.get(pk=org.pk).connection_allowed_hosts == ""


@pytest.mark.django_db
def test_the_deployment_allow_list_admits_a_host_for_every_org(
    settings, member_api, internal_server
):
    settings.FLUIDBOX_CONNECTION_ALLOWED_HOSTS = [f"127.0.0.0/8:{internal_server.port}"]
    created = create_personal(member_api, f"http://localhost:{internal_server.port}/mcp")
    assert created.status_code == 201, created.content
    refreshed = member_api.post(f"/v1/connections/{created.json()['id']}/tools/refresh")
    assert refreshed.status_code == 200


@pytest.mark.django_db
def test_seed_demo_allows_exactly_its_own_server(no_allowed_hosts, demo_mcp_server):
    from django.core.management import call_command

    call_command("seed_demo", "--mcp-url", demo_mcp_server.url)
    demo = Organization.objects.get(slug="demo")
    port = demo_mcp_server.url.split(":")[2].split("/")[0]
    assert demo.connection_allowed_hosts == f"127.0.0.1:{port}"
    assert Connection.objects.get(org=demo, slug="tracker").photograph_digest
    call_command("seed_demo", "--mcp-url", demo_mcp_server.url)  # idempotent
    demo.refresh_from_db()
    assert demo.connection_allowed_hosts == f"127.0.0.1:{port}"


def test_a_mistyped_deployment_allow_list_stops_the_start(tmp_path):
    import subprocess
    import sys

    from tests.support.servers import ROOT, child_environment

    env = {**child_environment(), "FLUIDBOX_CONNECTION_ALLOWED_HOSTS": "10.0.0.0/8,bad host"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "FLUIDBOX_CONNECTION_ALLOWED_HOSTS" in result.stderr


@pytest.mark.django_db
def test_a_connection_url_with_a_password_is_refused_by_the_api_too(member_api, operator):
    """The portal's form refused it, the API did not: the URL is shown to the organization's
    staff on every page that names the connection, the credential is sealed."""
    from governance.models import Connection

    refused = create_personal(member_api, "https://mallory:MAL-PW@tracker.example/mcp")
    assert refused.status_code == 400
    assert "cannot carry a user or password" in refused.json()["detail"]
    assert "MAL-PW" not in refused.content.decode()
    assert not Connection.objects.filter(slug="mine").exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        "api_key=MAL-QS",
        "x=1&token=MAL-QS",
        "AUTH=MAL-QS",
        "sv=2024&sig=MAL-QS",
        "code=MAL-QS",
        "Key=MAL-QS",
    ],
)
def test_a_connection_url_with_a_credential_in_its_query_is_refused(member_api, query):
    """As a sink's (a review, stop 52): `?api_key=` went in, unsealed, and every approver
    listing the organization's connections read it."""
    from governance.models import Connection

    refused = create_personal(member_api, f"https://tracker.example/mcp?{query}")
    assert refused.status_code == 400
    assert "cannot carry a credential in its query string" in refused.json()["detail"]
    assert "MAL-QS" not in refused.content.decode()
    assert not Connection.objects.filter(slug="mine").exists()
    kept = create_personal(member_api, "https://tracker.example/mcp?project=ops&page=2")
    assert kept.status_code == 201, kept.content  # a query that names no secret is kept
    assert kept.json()["url"].endswith("?project=ops&page=2")


@pytest.mark.django_db
def test_a_webhook_url_with_a_password_is_refused_by_the_service(org):
    from governance.errors import Invalid
    from governance.models import NotificationChannel
    from governance.services.channels import channel_create, channel_update

    with pytest.raises(Invalid, match="cannot carry a user or password"):
        channel_create(
            org=org, name="hook", kind="webhook", url="https://u:HOOK-PW@hooks.test/x", secret="s"
        )
    channel = channel_create(
        org=org, name="hook", kind="webhook", url="https://hooks.test/x", secret="s"
    )
    with pytest.raises(Invalid, match="cannot carry a user or password"):
        channel_update(
            channel=channel, name="hook", is_active=True, url="https://u:HOOK-PW@hooks.test/x"
        )
    assert NotificationChannel.objects.get().url == "https://hooks.test/x"


@pytest.mark.django_db
def test_where_org_admins_may_not_allow_hosts_only_a_superuser_opens_the_network(
    no_allowed_hosts, org, admin_user, member_api, internal_server
):
    """A deployment shared by tenants: one tenant's admin must not open the server's own
    network (FLUIDBOX_ORG_ADMINS_ALLOW_HOSTS off)."""
    from django.contrib.auth.models import User
    from django.test import Client

    from governance.errors import Forbidden
    from governance.services.orgs import org_allowed_hosts_set

    no_allowed_hosts.FLUIDBOX_ORG_ADMINS_ALLOW_HOSTS = False
    allowance = f"127.0.0.1:{internal_server.port}"
    url = f"http://127.0.0.1:{internal_server.port}/mcp"
    browser = Client()
    browser.force_login(admin_user)
    page = f"/admin/governance/organization/{org.pk}/change/"
    shown = browser.get(page).content.decode()
    assert 'name="connection_allowed_hosts"' not in shown  # read-only for them
    posted = browser.post(page, {"connection_allowed_hosts": allowance})
    assert posted.status_code in (200, 302)
    assert Organization.objects.get(pk=org.pk).connection_allowed_hosts == ""
    with pytest.raises(Forbidden, match="only a superuser"):
        org_allowed_hosts_set(org=org, text=allowance, by=admin_user)
    assert create_personal(member_api, url).status_code == 400

    root = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    browser.force_login(root)
    assert browser.post(page, {"connection_allowed_hosts": allowance}).status_code == 302
    assert Organization.objects.get(pk=org.pk).connection_allowed_hosts == allowance
    assert create_personal(member_api, url).status_code == 201
