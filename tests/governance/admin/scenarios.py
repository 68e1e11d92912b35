"""Data for the portal's tests, made through the services as a real deployment makes it."""

from governance.authentication import Actor, ActorKind
from governance.models import Approval, Connection
from governance.services.connections import connection_create, photograph_store
from governance.services.gate import permission_request
from governance.services.runs import run_create
from tests.governance.broker.support import ECHO_TOOLS


def operator_of(org) -> Actor:
    return Actor(kind=ActorKind.OPERATOR, org_id=org.pk, roles={org.pk: "operator"})


def owner_actor(username: str) -> Actor:
    """A person acting for themselves (their portal session)."""
    from django.contrib.auth.models import User

    from governance.authentication import portal_actor

    return portal_actor(User.objects.get(username=username))


def sandbox_run(
    org,
    *,
    agent="triage-bot",
    invoked_by=None,
    connections=(),
    autonomy="supervised",
    created_by: Actor | None = None,
):
    """A supervised run with the sandbox bundle (and any connections); returns the Run.
    A personal connection is usable only when its owner creates the run (`created_by`)."""
    created = run_create(
        org=org,
        agent=agent,
        policy_name="default",
        autonomy=autonomy,
        source={"kind": "manual"},
        budget_tokens=100000,
        bundles=["sandbox-basic"] if not connections else [],
        connections=list(connections),
        invoked_by=invoked_by,
        created_by=created_by,
    )
    return created.run, created.session_token


def ask(run, tool, arguments, call_id="c-1", session_id="s-1"):
    return permission_request(
        run=run, session_id=session_id, tool_call_id=call_id, tool=tool, arguments=arguments
    )


def pending_approval(org, *, to="bob@example.com", call_id="c-1") -> Approval:
    """send_email is ASK in the test policy: a supervised run pauses for a human."""
    run, _ = sandbox_run(org)
    answer = ask(run, "send_email", {"to": to, "body": "hello"}, call_id=call_id)
    assert answer.tool_call.decision == "pending"
    return answer.approval


def personal_connection(org, owner: str, *, slug="mine", credential="Bearer mine-1") -> Connection:
    """`owner` connects their own account (with a credential someone else gave, every run's
    use of it would wait for the owner's consent)."""
    connection = connection_create(
        org=org,
        actor=owner_actor(owner),
        slug=slug,
        kind="personal",
        transport="streamable-http",
        owner=owner,
        url="http://127.0.0.1:9/mcp",
        credential={"header": "Authorization", "value": credential},
    )
    return photograph_store(connection=connection, tools=[dict(t) for t in ECHO_TOOLS])


def shared_connection(org, *, slug="crm", credential="Bearer crm-1") -> Connection:
    connection = connection_create(
        org=org,
        actor=operator_of(org),
        slug=slug,
        kind="shared",
        transport="streamable-http",
        url="http://127.0.0.1:9/mcp",
        credential={"header": "Authorization", "value": credential},
    )
    return photograph_store(connection=connection, tools=[dict(t) for t in ECHO_TOOLS])


def personal_pending_approval(org, owner: str) -> Approval:
    """A paused call on `owner`'s personal connection: only `owner` may decide it."""
    personal_connection(org, owner)
    run, _ = sandbox_run(org, invoked_by=owner, connections=["mine"], created_by=owner_actor(owner))
    answer = ask(run, "mine.update", {"id": "1", "value": "x"})
    assert answer.tool_call.decision == "pending", answer.as_json()
    return answer.approval
