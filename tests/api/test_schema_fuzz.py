"""schemathesis against `/v1/schema`: every endpoint, fuzzed in-process through the WSGI app.

For each operation, generated requests (valid and invalid by the schema) must never get a
5xx, and every answer must match the schema — 4xx included, which the schema declares as
our one `Error` shape. Each request carries the credential its endpoint takes.
"""

from dataclasses import dataclass
from uuid import uuid4

import pytest
import schemathesis
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from governance.models import Role
from governance.services.budget import reservation_create
from governance.services.connections import connection_create
from governance.services.gate import permission_request
from governance.services.orgs import api_key_create, user_create
from governance.services.runs import run_create
from ledger.canonical import canonical_json

CHECKS = schemathesis.Config.from_dict(
    {
        "checks": {
            # The schema gives shapes, not referential or cross-field rules: an unknown policy
            # name, an owner on a shared connection, `call` together with `tool` are
            # schema-valid and rightly answered 4xx, so "valid means accepted" does not hold.
            "positive_data_acceptance": {"enabled": False},
            # A body over DATA_UPLOAD_MAX_MEMORY_SIZE is refused with 413 before it is parsed.
            "negative_data_rejection": {
                "expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422]
            },
        }
    }
)
schema = schemathesis.openapi.from_wsgi("/v1/schema", WSGIHandler(), config=CHECKS)

FUZZ = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)

RUNNER_SUFFIXES = ("/permission", "/budget/reservations", "/settle", "/call", "/secrets", "/finish")
HUMAN_PREFIX = "/v1/approvals"
SANDBOX_TOOLS = ("read_file", "write_file", "list_dir", "run_command")


@pytest.fixture(autouse=True)
def in_process_app(db, settings):
    # Django's test client does the same: a request must not close the test's transaction.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    settings.FLUIDBOX_STREAM_SECONDS = 0  # one batch, then the bounded stream ends
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@dataclass
class World:
    """Real objects for path parameters, and one credential per kind of caller."""

    org: object
    operator_key: str
    personal_key: str
    connection_id: int
    inspected_run_id: str

    def fresh_run(self, *, autonomy: str = "autonomous"):
        return run_create(
            org=self.org,
            agent="fuzz-bot",
            policy_name="default",
            autonomy=autonomy,
            source={"kind": "manual"},
            budget_tokens=100_000,
            bundles=["sandbox-basic"],
            connections=[],
        )

    def pending_approval_id(self) -> str:
        run = self.fresh_run(autonomy="supervised").run
        # A fresh address each time: an earlier "approve & remember" must not pre-approve it.
        answer = permission_request(
            run=run,
            session_id="s",
            tool_call_id="c",
            tool="send_email",
            arguments={"to": f"{uuid4().hex}@example.com"},
        )
        return str(answer.approval.pk)


@pytest.fixture
def world(org, approver) -> World:
    operator = api_key_create(org=org, name="fuzz")
    personal = api_key_create(org=org, name="fuzz-alice", user=approver)
    user_create(username="pat", org=org, role=Role.MEMBER, password="pw-pat-123")
    connection = connection_create(
        org=org,
        actor=_operator_actor(operator),
        slug="crm",
        kind="shared",
        transport="streamable-http",
        url="http://127.0.0.1:9/mcp",  # nothing listens: refresh must fail cleanly
        credential={"header": "Authorization", "value": "Bearer fuzz"},
    )
    inspected = World.fresh_run(World(org, "", "", 0, "")).run
    return World(
        org=org,
        operator_key=operator.plaintext,
        personal_key=personal.plaintext,
        connection_id=connection.pk,
        inspected_run_id=str(inspected.pk),
    )


def _operator_actor(issued):
    from governance.authentication import Actor, ActorKind

    return Actor(kind=ActorKind.OPERATOR, org_id=issued.key.org_id, api_key_id=issued.key.pk)


def _is_runner_endpoint(case) -> bool:
    return case.path.endswith(RUNNER_SUFFIXES)


def _real_objects(case, world: World) -> str:
    """Point path parameters at real objects; return the credential this endpoint takes."""
    params = case.path_parameters or {}
    if case.path.startswith(HUMAN_PREFIX):
        if "approval_id" in params:
            params["approval_id"] = world.pending_approval_id()
        return world.personal_key
    if "connection_id" in params:
        params["connection_id"] = str(world.connection_id)
    if "name" in params:
        params["name"] = "default"
    if not _is_runner_endpoint(case):
        if "run_id" in params:
            params["run_id"] = world.inspected_run_id
        return world.operator_key
    created = world.fresh_run()
    params["run_id"] = str(created.run.pk)
    if "reservation_id" in params:
        reservation = reservation_create(
            run=created.run, request_key="r", max_output_tokens=10, input_tokens_upper_bound=10
        ).reservation
        params["reservation_id"] = str(reservation.pk)
    if "tool" in params:
        params["tool"] = "crm.lookup"
    _aim_at_a_real_tool(case)
    return created.session_token


def _aim_at_a_real_tool(case) -> None:
    """Half the gate requests name a frozen tool, so the later stages see fuzzed input too."""
    body = case.body
    if not (case.path.endswith("/permission") and isinstance(body, dict)):
        return
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return  # a request meant to be invalid stays exactly as generated
    name = body.get("tool")
    if not isinstance(name, str) or len(name) % 2:
        return
    tool = SANDBOX_TOOLS[len(name) % len(SANDBOX_TOOLS)]
    body["tool"] = tool
    if isinstance(body.get("arguments"), dict):
        text = canonical_json(body["arguments"])
        key = "command" if tool == "run_command" else "path"
        body["arguments"] = {key: text} if tool != "write_file" else {key: text, "content": ""}


@schema.parametrize()
@FUZZ
def test_no_endpoint_errs_or_breaks_its_schema_on_real_objects(case, world):
    token = _real_objects(case, world)
    case.call_and_validate(headers={"Authorization": f"Bearer {token}"})


@schema.parametrize()
@FUZZ
def test_no_endpoint_errs_or_breaks_its_schema_on_made_up_ids(case, world):
    token = world.fresh_run().session_token if _is_runner_endpoint(case) else world.operator_key
    if case.path.startswith(HUMAN_PREFIX):
        token = world.personal_key
    case.call_and_validate(headers={"Authorization": f"Bearer {token}"})
