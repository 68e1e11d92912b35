"""Bob, a member with a personal tracker connection, for the tests of who may use it."""

import pytest

from governance.models import Role
from governance.services.orgs import api_key_create, user_create
from tests.conftest import Api
from tests.governance.broker.support import connect

# What an operator would write to use bob's connection without him.
BOBTRACKER_ALWAYS = """
name: default
rules:
  - pattern: "bobtracker.*"
    action: ALWAYS
"""

TRACKER_TOOLS = [
    {
        "name": "create_issue",
        "description": "Open an issue in bob's tracker",
        "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}},
    }
]


@pytest.fixture
def bob(org):
    return user_create(username="bob", org=org, role=Role.MEMBER, password="pw-bob-123")


@pytest.fixture
def bob_key(org, bob):
    return Api(api_key_create(org=org, user=bob, name="bob").plaintext)


@pytest.fixture
def tracker(mcp_server_factory):
    return mcp_server_factory(tools=TRACKER_TOOLS)


def connect_bobs_tracker(operator, tracker, *, credential: str) -> str:
    """Bob's personal connection `bobtracker`, set up by an operator, and the policy that
    ALWAYS allows its tools: the connection's id."""
    connection_id = connect(
        operator, tracker, slug="bobtracker", kind="personal", owner="bob", credential=credential
    )
    response = operator.client.put(
        "/v1/policies/default", {"yaml": BOBTRACKER_ALWAYS}, format="json"
    )
    assert response.status_code in (200, 201), response.content
    return connection_id
