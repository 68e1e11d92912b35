"""A server's tool listing, attacked from the server's side: the names and texts it sends are
the server's choice, and the photograph is what the rules are read against. A name the
SPEC's tool names do not allow (a `:` that makes `tracker.list_issues:*` allow
`list_issues:purge`, a bidi override, a name too long to freeze) or a text PostgreSQL cannot
store is refused at the refresh with a 409 naming the tool; nothing is photographed, and
runs keep the photograph they had."""

import pytest

from governance.models import Connection
from tests.conftest import run_body
from tests.governance.broker.support import ECHO_TOOLS

pytestmark = pytest.mark.django_db(transaction=True)


def connection_of(operator, server, slug: str) -> tuple[str, object]:
    created = operator.post(
        "/v1/connections",
        {"slug": slug, "kind": "shared", "transport": "streamable-http", "url": server.url},
    )
    assert created.status_code == 201, created.content
    connection_id = created.json()["id"]
    return connection_id, operator.post(f"/v1/connections/{connection_id}/tools/refresh")


@pytest.mark.parametrize(
    ("tool", "shown"),
    [
        ({"name": "list_issues:purge"}, '"list_issues:purge"'),
        ({"name": "ok\u202eevil"}, '"ok\\u202eevil"'),
        ({"name": "ok\nrm"}, '"ok\\nrm"'),
        ({"name": "L" * 300}, '"' + "L" * 80 + '"'),
        ({"name": "lookup2", "description": "a\u0000b"}, '"lookup2"'),
    ],
)
def test_a_listing_outside_the_tool_names_or_unstorable_is_refused_at_the_refresh(
    broker_org, operator, mcp_server_factory, tool, shown
):
    server = mcp_server_factory(tools=[*ECHO_TOOLS, {"inputSchema": {"type": "object"}, **tool}])

    connection_id, refreshed = connection_of(operator, server, "odd")

    assert refreshed.status_code == 409, refreshed.content
    assert refreshed.json()["error"] == "upstream"
    assert shown in refreshed.json()["detail"]
    assert Connection.objects.get(pk=connection_id).photograph in (None, [])
    created = operator.post("/v1/runs", run_body(bundles=[], connections=["odd"]))
    assert created.status_code == 400, created.content  # nothing photographed to freeze
    assert "photograph" in created.json()["detail"], created.json()


def test_a_photograph_taken_before_keeps_serving_when_the_server_turns_odd(
    broker_org, operator, mcp_server_factory
):
    server = mcp_server_factory(tools=ECHO_TOOLS)
    connection_id, refreshed = connection_of(operator, server, "crm")
    assert refreshed.status_code == 200
    server.set_tools([*ECHO_TOOLS, {"name": "lookup:all", "inputSchema": {"type": "object"}}])

    again = operator.post(f"/v1/connections/{connection_id}/tools/refresh")

    assert again.status_code == 409 and '"lookup:all"' in again.json()["detail"]
    kept = Connection.objects.get(pk=connection_id).photograph
    assert [t["name"] for t in kept] == ["lookup", "update"]


def _tool(name: str, description: str = "") -> dict:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


@pytest.mark.parametrize(
    ("tools", "page_size", "said"),
    [
        ([_tool(f"t{n}") for n in range(1001)], 250, "more than 1000 tools"),
        ([_tool(f"t{n}", "d" * 100_000) for n in range(22)], 4, "run past 2 MiB"),
    ],
)
def test_a_listing_too_large_to_keep_is_refused_at_the_refresh(
    broker_org, operator, mcp_server_factory, tools, page_size, said
):
    """A review (stop 52): a member's server listed 180 MB over a dozen pages, each under the
    response size cap; the photograph took a web worker's memory, and every tenant's requests
    with it. A listing is capped as a whole, over all its pages."""
    server = mcp_server_factory(tools=ECHO_TOOLS)
    connection_id, refreshed = connection_of(operator, server, "big")
    assert refreshed.status_code == 200
    server.set_tools(tools, page_size=page_size)

    again = operator.post(f"/v1/connections/{connection_id}/tools/refresh")

    assert again.status_code == 409, again.content
    assert again.json()["error"] == "upstream" and said in again.json()["detail"]
    kept = Connection.objects.get(pk=connection_id).photograph
    assert [t["name"] for t in kept] == ["lookup", "update"]
