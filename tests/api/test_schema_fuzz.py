"""schemathesis against `/v1/schema`: every endpoint, fuzzed in-process through the WSGI app.

For each operation, generated requests (valid and invalid by the schema) must never get a
5xx, and every answer must match the schema — 4xx included, which the schema declares as
our one `Error` shape. Each request carries the credential its endpoint takes: an operator
key, a personal key (approvals), or a fresh run's session token (runner endpoints).

Deliberately not checked (see CHECKS): "schema-valid input is accepted", because the schema
gives shapes, not referential or cross-field rules.
"""

from dataclasses import dataclass
from uuid import uuid4

import pytest
import schemathesis
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from fluidbox.canonical import canonical_json
from governance.authentication import Actor, ActorKind
from governance.models import Connection, Organization
from governance.services.budget import reservation_create
from governance.services.connections import connection_create
from governance.services.gate import permission_request
from governance.services.orgs import api_key_create
from governance.services.runs import CreatedRun, run_create

CHECKS = schemathesis.Config.from_dict(
    {
        "checks": {
            # An unknown policy name, an owner on a shared connection, `call` together with
            # `tool`: schema-valid, and rightly answered 4xx.
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
    derandomize=True,  # the same cases on every run: a red suite is reproducible
    suppress_health_check=list(HealthCheck),
)

RUNNER_SUFFIXES = ("/permission", "/budget/reservations", "/settle", "/call", "/secrets", "/finish")
HUMAN_PREFIX = ("/v1/approvals", "/v1/bindings")
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
    """Real objects for path parameters, and the credentials of each kind of caller."""

    org: Organization
    operator_key: str
    personal_key: str
    connection_id: int
    inspected_run_id: str = ""

    def fresh_run(self, *, autonomy: str = "autonomous") -> CreatedRun:
        # Autonomous by default: a fuzzed `wait_seconds` never parks on an approval.
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

    def pending_binding_id(self) -> str:
        """A run an operator made with alice's personal connection: hers to answer."""
        from governance.services.connections import photograph_store
        from tests.governance.broker.support import ECHO_TOOLS

        connection = Connection.objects.filter(org=self.org, slug="alices").first()
        if connection is None:
            connection = connection_create(
                org=self.org,
                actor=Actor(kind=ActorKind.OPERATOR, org_id=self.org.pk),
                slug="alices",
                kind="personal",
                owner="alice",
                transport="streamable-http",
                url="http://127.0.0.1:9/mcp",
            )
            photograph_store(connection=connection, tools=[dict(t) for t in ECHO_TOOLS])
        created = run_create(
            org=self.org,
            agent="fuzz-bot",
            policy_name="default",
            autonomy="autonomous",
            source={"kind": "manual"},
            budget_tokens=100_000,
            bundles=[],
            connections=["alices"],
            invoked_by="alice",
        )
        return str(created.run.bindings.get().pk)


@pytest.fixture
def world(org, approver) -> World:
    operator = api_key_create(org=org, name="fuzz")
    connection = connection_create(
        org=org,
        actor=Actor(kind=ActorKind.OPERATOR, org_id=org.pk, api_key_id=operator.key.pk),
        slug="crm",
        kind="shared",
        transport="streamable-http",
        url="http://127.0.0.1:9/mcp",  # nothing listens: a refresh must fail cleanly
        credential={"header": "Authorization", "value": "Bearer fuzz"},
    )
    created = World(
        org=org,
        operator_key=operator.plaintext,
        personal_key=api_key_create(org=org, name="fuzz-alice", user=approver).plaintext,
        connection_id=connection.pk,
    )
    created.inspected_run_id = str(created.fresh_run().run.pk)
    return created


def is_runner_endpoint(case) -> bool:
    return case.path.endswith(RUNNER_SUFFIXES)


def credential_for(case, world: World) -> str:
    if case.path.startswith(HUMAN_PREFIX):
        return world.personal_key
    if is_runner_endpoint(case):
        return world.fresh_run().session_token
    return world.operator_key


def point_at_real_objects(case, world: World) -> str:
    """Replace generated path parameters with real objects; return the credential to send."""
    params = case.path_parameters or {}
    if "approval_id" in params:
        params["approval_id"] = world.pending_approval_id()
    if "binding_id" in params:
        params["binding_id"] = world.pending_binding_id()
    if "connection_id" in params:
        params["connection_id"] = str(world.connection_id)
    if "name" in params:
        params["name"] = "default"
    if not is_runner_endpoint(case):
        if "run_id" in params:
            params["run_id"] = world.inspected_run_id
        return credential_for(case, world)
    created = world.fresh_run()  # a fuzzed /finish must not void the next case's token
    params["run_id"] = str(created.run.pk)
    if "reservation_id" in params:
        params["reservation_id"] = str(
            reservation_create(
                run=created.run, request_key="r", max_output_tokens=10, input_tokens_upper_bound=10
            ).reservation.pk
        )
    if "tool" in params:
        params["tool"] = "crm.lookup"
    aim_at_a_frozen_tool(case)
    return created.session_token


def aim_at_a_frozen_tool(case) -> None:
    """About half the valid gate requests name a frozen tool, with the fuzzed arguments as its
    match argument, so the schema, trust-tier and policy stages (and the shell parser) see
    fuzzed input too, not only the capability stage."""
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
        if tool == "run_command":
            body["arguments"] = {"command": text}
        elif tool == "write_file":
            body["arguments"] = {"path": text, "content": ""}
        else:
            body["arguments"] = {"path": text}


def test_the_schema_is_valid_openapi_without_warnings(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", tmp_path / "s.yaml")


def test_every_operation_declares_the_json_error_shape_for_4xx(client):
    document = client.get("/v1/schema", HTTP_ACCEPT="application/json").json()
    error = document["components"]["schemas"]["Error"]
    assert error["required"] == ["error", "detail"]
    operations = [op for ops in document["paths"].values() for op in ops.values()]
    assert len(operations) >= 18
    for operation in operations:
        declared = operation["responses"]["4XX"]["content"]["application/json"]["schema"]
        assert declared == {"$ref": "#/components/schemas/Error"}, operation["operationId"]


@schema.parametrize()
@FUZZ
def test_no_endpoint_errs_or_breaks_its_schema_on_real_objects(case, world):
    token = point_at_real_objects(case, world)
    case.call_and_validate(headers={"Authorization": f"Bearer {token}"})


@schema.parametrize()
@FUZZ
def test_no_endpoint_errs_or_breaks_its_schema_on_made_up_ids(case, world):
    token = credential_for(case, world)
    case.call_and_validate(headers={"Authorization": f"Bearer {token}"})
