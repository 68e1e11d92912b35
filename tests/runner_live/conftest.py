"""A live fluidbox (gunicorn on the test database) for the runner, and a human at the inbox."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest

from governance.authentication import Actor, ActorKind
from governance.services.connections import connection_create, connection_refresh
from governance.services.orgs import api_key_create
from governance.services.policies import policy_save
from tests.conftest import run_body
from tests.support.waiting import PATIENCE_SECONDS

DEMO_POLICY = (
    Path(__file__).resolve().parents[2] / "governance" / "demo" / "policy.yaml"
).read_text()


@pytest.fixture
def demo_org(org, demo_mcp_server):
    """The test org set up as `manage.py seed_demo` sets up the demo one: the seeded policy and
    the demo tracker connected as `tracker`."""
    operator = Actor(kind=ActorKind.OPERATOR, org_id=org.pk, roles={org.pk: "operator"})
    connection = connection_create(
        org=org,
        actor=operator,
        slug="tracker",
        kind="shared",
        transport="streamable-http",
        url=demo_mcp_server.url,
        credential={
            "header": "Authorization",
            "value": f"Bearer {demo_mcp_server.expected_token}",
        },
    )
    connection_refresh(connection=connection, actor=operator)
    policy_save(org=org, text=DEMO_POLICY, author=None)
    return org


@pytest.fixture
def approver_key(org, approver) -> str:
    """A personal API key of alice, an approver of the org."""
    return api_key_create(org=org, user=approver, name="alice-laptop").plaintext


def create_run(operator, **overrides) -> tuple[str, str]:
    """A run created through the API as the operator: (run id, session token)."""
    response = operator.post("/v1/runs", run_body(**overrides))
    assert response.status_code == 201, response.content
    return response.json()["id"], response.json()["session_token"]


def decide(base_url: str, key: str, approval_id: str, decision: str = "approve") -> httpx.Response:
    return httpx.post(
        f"{base_url}/v1/approvals/{approval_id}/decision",
        json={"decision": decision},
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )


class InboxApprover(threading.Thread):
    """An approver watching the inbox over HTTP: decides the first pending call to `tool`."""

    def __init__(self, base_url: str, key: str, tool: str, *, decision: str = "approve") -> None:
        super().__init__(daemon=True)
        self.base_url = base_url
        self.key = key
        self.tool = tool
        self.decision = decision
        self.decided: dict | None = None
        self.error: str | None = None

    def run(self) -> None:
        deadline = time.monotonic() + PATIENCE_SECONDS
        with httpx.Client(headers={"Authorization": f"Bearer {self.key}"}, timeout=10) as http:
            while time.monotonic() < deadline:
                inbox = http.get(f"{self.base_url}/v1/approvals", params={"status": "pending"})
                waiting = [a for a in inbox.json()["approvals"] if a["tool"] == self.tool]
                if waiting:
                    response = decide(self.base_url, self.key, waiting[0]["id"], self.decision)
                    if response.status_code != 200:
                        self.error = f"HTTP {response.status_code}: {response.text[:300]}"
                        return
                    self.decided = response.json()["approval"]
                    return
                time.sleep(0.1)
        self.error = f"no pending approval for {self.tool} appeared"
