"""Review wave 55c, the vault from the attacker's and the admin's side.

1. A header credential that no HTTP request can carry (a CR/LF meant to inject a header, a
   pasted token with its trailing newline, a letter outside ASCII) was sealed and answered
   201. The HTTP client refuses it at every send, so the connection could never be
   photographed or called, and the only word was "the connection to the MCP server failed
   (LocalProtocolError)"; a reconnect with one moved the generation, so every bound run
   refused for a credential that was never usable. Nothing was injected (the client
   refuses), but the door must say so when the credential is given, without quoting it.

2. While the vault is sealed (a process started with a wrong or missing passphrase), giving a
   credential (connection create, reconnect; the portal's forms; an agent secret in the
   admin) answered a 500 "internal error", not the clear "vault sealed" SPEC §7 asks for.
   With `DEBUG` on (a documented setting), that 500 was Django's technical page, which
   prints the POST data: the plaintext the admin had just typed.
"""

import pytest
from django.test import Client

from governance import vault
from governance.models import AgentSecret, Connection
from tests.governance.broker.support import connect

pytestmark = pytest.mark.django_db

TOKEN = "cnry55c-vault-6d2a9e14b7"

UNSENDABLE = {
    "crlf header injection": f"Bearer {TOKEN}\r\nX-Injected: yes",
    "lf header injection": f"Bearer {TOKEN}\nX-Injected: yes",
    "pasted with its newline": f"Bearer {TOKEN}\n",
    "trailing blank": f"Bearer {TOKEN} ",
    "non-ascii letter": f"Bearer {TOKEN}é",
}


def create(operator, server, value, slug="crm"):
    return operator.post(
        "/v1/connections",
        {
            "slug": slug,
            "kind": "shared",
            "transport": "streamable-http",
            "url": server.url,
            "credential": {"header": "Authorization", "value": value},
        },
    )


@pytest.mark.parametrize("case", list(UNSENDABLE))
def test_a_header_credential_no_request_can_carry_is_refused_when_given(
    broker_org, operator, echo_server, case
):
    value = UNSENDABLE[case]

    created = create(operator, echo_server, value)

    assert created.status_code == 400, created.content
    assert TOKEN not in created.content.decode()
    assert not Connection.objects.exists()
    # A reconnect with one is refused too, and the generation (every bound run) stays.
    connection_id = connect(operator, echo_server, slug="good")
    reconnected = operator.post(
        f"/v1/connections/{connection_id}/reconnect",
        {"credential": {"header": "Authorization", "value": value}},
    )
    assert reconnected.status_code == 400, reconnected.content
    assert TOKEN not in reconnected.content.decode()
    assert Connection.objects.get(pk=connection_id).authorization_generation == 1
    # Nothing ever reached the server with an injected header.
    assert all("x-injected" not in (r.get("headers") or {}) for r in echo_server.requests())


def test_an_env_credential_keeps_its_blanks_and_letters(broker_org, operator, settings):
    """Only a header's value is held to what HTTP can carry: an environment variable may
    hold a newline or a non-ASCII letter (the stdio server gets it as given)."""
    settings.FLUIDBOX_STDIO_COMMANDS = ["python server.py"]
    created = operator.post(
        "/v1/connections",
        {
            "slug": "local",
            "kind": "shared",
            "transport": "stdio",
            "command": ["python", "server.py"],
            "credential": {"env": "DB_PASS", "value": "pässwörd with\nnewline "},
        },
    )
    assert created.status_code == 201, created.content


@pytest.fixture
def sealed(broker_org, operator, echo_server, settings):
    """A connection sealed under the right passphrase; then the processes restart with a
    wrong one."""
    settings.FLUIDBOX_VAULT_PASSPHRASE = "correct horse battery staple"
    vault.reset_cache()
    connection_id = connect(operator, echo_server)
    settings.FLUIDBOX_VAULT_PASSPHRASE = "wrong passphrase"
    vault.reset_cache()
    assert vault.tier2_status() == "sealed"
    yield connection_id
    vault.reset_cache()


def test_giving_a_credential_while_the_vault_is_sealed_says_vault_sealed(
    sealed, operator, echo_server
):
    operator.client.raise_request_exception = False

    created = create(operator, echo_server, f"Bearer {TOKEN}", slug="other")
    reconnected = operator.post(
        f"/v1/connections/{sealed}/reconnect",
        {"credential": {"header": "Authorization", "value": f"Bearer {TOKEN}"}},
    )

    for response in (created, reconnected):
        assert response.status_code == 409, response.content
        assert response.json()["error"] == "vault_sealed"
        assert "vault sealed" in response.json()["detail"]
    assert list(Connection.objects.values_list("slug", "authorization_generation")) == [("crm", 1)]


@pytest.mark.parametrize("debug", [False, True])
def test_the_portal_says_vault_sealed_and_never_shows_what_was_typed(
    sealed, admin_user, broker_org, echo_server, settings, debug
):
    settings.DEBUG = debug  # DEBUG's error page would print the POST data
    web = Client(raise_request_exception=False)
    web.force_login(admin_user)
    credential = {
        "credential_placement": "header",
        "credential_name": "Authorization",
        "credential_value": f"Bearer {TOKEN}",
    }

    pages = [
        web.post(
            "/admin/governance/connection/add/",
            {
                "org": broker_org.pk,
                "slug": "other",
                "kind": "shared",
                "transport": "streamable-http",
                "url": echo_server.url,
                **credential,
            },
        ),
        web.post(f"/admin/governance/connection/{sealed}/do/reconnect/", credential),
        web.post(
            "/admin/governance/agentsecret/add/",
            {"org": broker_org.pk, "agent": "", "name": "DB_PASS", "value": TOKEN},
        ),
    ]

    for page in pages:
        text = page.content.decode(errors="replace")
        # (The admin's own add form re-renders its errors with a 200, as Django's admin does.)
        assert page.status_code in (200, 400, 409), (page.status_code, text[:500])
        assert "vault sealed" in text
        assert TOKEN not in text
    assert Connection.objects.count() == 1
    assert not AgentSecret.objects.exists()
