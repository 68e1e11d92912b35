"""Text from outside fluidbox on the auditor's run page, from the attacker's side: the run's
source (the repository a CI names, a pull request's head) is frozen with the run and shown in
its "Frozen at creation" details beside the agent's name, which is marked."""

import pytest
from django.test import Client

from tests.conftest import run_body, run_from_before_names_were_checked

CYRILLIC_A = "\u0430"  # drawn exactly like the Latin `a`
MARKED_CYRILLIC_A = ">\\u0430</mark>"
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: the text after it reads backwards
MARKED_RLO = ">\\u202e</mark>"


def frozen_source(user, run_id) -> str:
    client = Client()
    client.force_login(user)
    page = client.get(f"/admin/governance/run/{run_id}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    return html.split("<dt>source</dt>", 1)[1].split("</dd>", 1)[0]


@pytest.mark.django_db
def test_a_look_alike_repository_in_the_runs_source_is_marked_on_the_timeline(operator, auditor):
    # Proves: the API refuses control and format characters in a source's repository, but
    # lets through a letter of another script inside a word. A pull request from
    # `аcme/app` (Cyrillic `а`, someone else's repository) read on the auditor's page as
    # the organization's own `acme/app`: the frozen "source" was the raw JSON, while the
    # agent's name two lines above and the same source in the run.created row are marked.
    spoofed = f"{CYRILLIC_A}cme/app"
    created = operator.post(
        "/v1/runs",
        run_body(
            source={"kind": "pull_request", "repository": "acme/app", "head_repository": spoofed}
        ),
    )
    assert created.status_code == 201, created.content
    shown = frozen_source(auditor, created.json()["id"])
    assert spoofed not in shown
    assert MARKED_CYRILLIC_A in shown


@pytest.mark.django_db
def test_a_bidi_override_in_an_older_runs_source_is_marked_on_the_timeline(org, auditor):
    # Proves: a run frozen before the API refused format characters in a source (as
    # `run_from_before_names_were_checked` makes them) showed its RLO raw in the frozen
    # "source", reordering what the auditor reads, where the agent's name is marked.
    run = run_from_before_names_were_checked(
        org, agent="triage-bot", source={"kind": "manual", "repository": f"acme/{RLO}ppa"}
    )
    shown = frozen_source(auditor, run.run.pk)
    assert RLO not in shown
    assert MARKED_RLO in shown


@pytest.mark.django_db
def test_a_bidi_override_in_an_upstream_tools_description_is_marked_on_the_connection_page(
    operator, admin_user
):
    # Proves: an MCP server writes its tools' descriptions; the connection page, where an
    # admin reads what a server offers before binding runs to it, showed them raw, so
    # `Deletes every issue{RLO}` could read as something else. Names are checked at the
    # refresh; descriptions are the server's prose, and are now marked like an agent's words.
    from governance.models import Connection
    from governance.services.connections import photograph_store

    created = operator.post(
        "/v1/connections",
        {
            "slug": "tracker",
            "kind": "shared",
            "transport": "streamable-http",
            "url": "http://127.0.0.1:42999/mcp",
        },
    )
    assert created.status_code == 201, created.content
    connection = Connection.objects.get(pk=created.json()["id"])
    tool = {
        "name": "purge",
        "description": f"Deletes every issue. {RLO}ylno-daer ,elbmah",
        "inputSchema": {"type": "object"},
    }
    photograph_store(connection=connection, tools=[tool])
    client = Client()
    client.force_login(admin_user)
    page = client.get(f"/admin/governance/connection/{connection.pk}/change/")
    assert page.status_code == 200
    photograph = page.content.decode().split('id="photograph"', 1)[1].split("</table>", 1)[0]
    assert RLO not in photograph
    assert MARKED_RLO in photograph
