"""Personas, an org with a policy and a sandbox bundle, and API clients for each credential."""

from pathlib import Path

import pytest
from django.db import connection
from rest_framework.test import APIClient

from governance.models import Organization, Role
from governance.services.bundles import bundle_import
from governance.services.orgs import api_key_create, org_create, user_create
from governance.services.policies import policy_save
from tests.mcp_servers.fixtures import demo_mcp_server, mcp_server_factory  # noqa: F401
from tests.support.servers import WebServer

ROOT = Path(__file__).resolve().parents[1]

TEST_POLICY = """
name: default
autonomous_fallback: deny
approval_timeout: 300
rules:
  - pattern: "read_file:*"
    action: ALWAYS
  - pattern: "run_command:rm *"
    action: NEVER
  - pattern: "run_command:git status"
    action: ALWAYS
  - pattern: "run_command:ls *"
    action: ALWAYS
  - pattern: "write_file:/workspace/*"
    action: ALWAYS
  - pattern: "write_file:*"
    action: NEVER
  - pattern: "send_email:*"
    action: ASK
tests:
  - call: "run_command:rm -rf /"
    expect: NEVER
"""

TEST_BUNDLE = (
    (ROOT / "runner" / "bundles" / "sandbox-basic.yaml").read_text()
    + """
  - name: send_email
    access: write
    secrets: true
    schema: {type: object, properties: {to: {type: string}, body: {type: string}},
             required: [to], additionalProperties: false}
"""
)


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL=postgres://…)")
    skip_sqlite = pytest.mark.skip(reason="SQLite only (unset DATABASE_URL)")
    for item in items:
        if "postgres" in item.keywords and connection.vendor != "postgresql":
            item.add_marker(skip)
        if "sqlite" in item.keywords and connection.vendor != "sqlite":
            item.add_marker(skip_sqlite)
    _start_the_longest_files_first(items)


def _start_the_longest_files_first(items) -> None:
    """`make test` hands whole files to its workers in this order (`--dist loadfile
    --no-loadscope-reorder`): files marked `long` first, then those with a `slow` test, then
    the rest, so that no long file starts last and runs alone while the other workers idle.
    The sort is stable: a file's tests stay together and in order."""

    def file_of(item) -> str:
        return item.nodeid.split("::", 1)[0]

    rank: dict[str, int] = {}
    for item in items:
        weight = 0 if "long" in item.keywords else 1 if "slow" in item.keywords else 2
        rank[file_of(item)] = min(rank.get(file_of(item), weight), weight)
    items.sort(key=lambda item: rank[file_of(item)])


class Api:
    """A JSON client for one credential."""

    def __init__(self, token: str | None = None, user=None) -> None:
        self.token = token
        self.client = APIClient()
        if token:
            self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        if user is not None:
            self.client.force_login(user)

    def get(self, path: str, **kwargs):
        return self.client.get(path, **kwargs)

    def post(self, path: str, data=None, **kwargs):
        return self.client.post(path, data, format="json", **kwargs)


@pytest.fixture
def org(db) -> Organization:
    organization = org_create(slug="acme")
    policy_save(org=organization, text=TEST_POLICY, author=None)
    bundle_import(org=organization, text=TEST_BUNDLE)
    return organization


@pytest.fixture
def other_org(db) -> Organization:
    organization = org_create(slug="globex")
    policy_save(org=organization, text=TEST_POLICY, author=None)
    bundle_import(org=organization, text=TEST_BUNDLE)
    return organization


@pytest.fixture
def admin_user(org):
    return user_create(username="ada", org=org, role=Role.ADMIN, password="pw-ada-123")


@pytest.fixture
def approver(org):
    return user_create(username="alice", org=org, role=Role.APPROVER, password="pw-alice-123")


@pytest.fixture
def auditor(org):
    return user_create(username="audrey", org=org, role=Role.AUDITOR, password="pw-audrey-123")


@pytest.fixture
def member(org):
    return user_create(username="mo", org=org, role=Role.MEMBER, password="pw-mo-123")


@pytest.fixture
def operator_key(org) -> str:
    return api_key_create(org=org, name="ci").plaintext


@pytest.fixture
def operator(operator_key) -> Api:
    return Api(operator_key)


@pytest.fixture
def other_operator(other_org) -> Api:
    return Api(api_key_create(org=other_org, name="ci").plaintext)


def run_body(**overrides) -> dict:
    body = {
        "agent": "triage-bot",
        "policy": "default",
        "autonomy": "supervised",
        "source": {"kind": "manual"},
        "budget_tokens": 100000,
        "bundles": ["sandbox-basic"],
        "connections": [],
    }
    body.update(overrides)
    return body


def run_from_before_names_were_checked(org, *, agent: str, **overrides):
    """A run whose agent name holds a character the API now refuses (a bidi override, a
    zero-width space), as runs made before the check have: the pages must still mark it.
    Made through the service, as `POST /v1/runs` would have made it then."""
    from governance.services.runs import run_create

    body = run_body(agent=agent, **overrides)
    return run_create(
        org=org,
        agent=body["agent"],
        policy_name=body["policy"],
        autonomy=body["autonomy"],
        source=body["source"],
        budget_tokens=body["budget_tokens"],
        bundles=body["bundles"],
        connections=body["connections"],
        invoked_by=body.get("invoked_by"),
    )


def run_over_http(server_url: str, org) -> tuple[str, dict[str, str]]:
    """A run of `org` created over HTTP with an operator key of its own: its id, and the
    headers its token authenticates with."""
    import httpx

    key = api_key_create(org=org, name=f"{org.slug} operator").plaintext
    created = httpx.post(
        f"{server_url}/v1/runs",
        json=run_body(),
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )
    assert created.status_code == 201, created.text
    return created.json()["id"], {"Authorization": f"Bearer {created.json()['session_token']}"}


@pytest.fixture(scope="module")
def module_web_server(django_db_setup, tmp_path_factory):
    """One gunicorn for a test module: starting one costs seconds of CPU, and what a test
    wrote is gone (transactional_db empties the tables) before the next test writes."""
    with WebServer(tmp_path_factory.mktemp("fluidbox"), workers=1, threads=16) as server:
        yield server


@pytest.fixture
def fluidbox_server(transactional_db, module_web_server):
    """A live fluidbox (gunicorn on the test database), shared by the module's tests."""
    if module_web_server.process.poll() is not None:  # an earlier test stopped it
        module_web_server.start()
    return module_web_server


@pytest.fixture
def make_run(operator):
    """Create a run through the API; returns (run_id, runner Api)."""

    def create(**overrides):
        response = operator.post("/v1/runs", run_body(**overrides))
        assert response.status_code == 201, response.content
        return response.json()["id"], Api(response.json()["session_token"])

    return create


@pytest.fixture(autouse=True)
def fresh_vault_cache():
    """Each test's database starts without a keyring; forget the previous test's keys."""
    from governance import vault

    vault.reset_cache()
    yield
    vault.reset_cache()


@pytest.fixture(autouse=True)
def no_upstream_sessions_between_tests():
    """The broker's pooled upstream sessions outlive a call; not a test (whose servers stop)."""
    from governance.mcp_sessions import pool

    yield
    pool.close_all()


@pytest.fixture
def broker_org(org):
    """The test org with a policy for the `crm` and personal `mine` connections."""
    from tests.governance.broker.support import BROKER_POLICY

    policy_save(org=org, text=BROKER_POLICY, author=None)
    return org


@pytest.fixture
def echo_server(mcp_server_factory):  # noqa: F811
    """A configurable MCP server offering a read tool `lookup` and a write tool `update`."""
    from tests.governance.broker.support import ECHO_TOOLS

    return mcp_server_factory(tools=[dict(tool) for tool in ECHO_TOOLS])
