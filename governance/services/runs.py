"""Creating a run freezes everything it will be judged by; finishing voids its token."""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from fluidbox.canonical import digest_of
from governance.authentication import Actor, ActorKind
from governance.errors import Conflict, Forbidden, Invalid, NotFound
from governance.models import (
    DECIDING_ROLES,
    RUN_TOKEN_PREFIX,
    Access,
    AutonomousFallback,
    Autonomy,
    BindingConsent,
    CapabilityBundle,
    Connection,
    ConnectionStatus,
    FrozenBinding,
    FrozenTool,
    Membership,
    Organization,
    Policy,
    Role,
    Run,
    RunBudget,
    RunStatus,
    TrustTier,
    hash_secret_token,
    new_secret_token,
)
from governance.schemas import guard_schema
from governance.services.broker import calls_in_flight
from governance.services.bundles import TOOL_NAME
from governance.services.settlement import approvals_close_for_run
from ledger.models import EventType, RunCounter
from ledger.redaction import redact
from ledger.services import chain_lock, event_append


@dataclass(frozen=True)
class CreatedRun:
    run: Run
    session_token: str


def trust_tier_for(source: dict, requested: str | None) -> str:
    """Fork or unknown fork-ness is read_only; a request may lower the tier, never raise it."""
    tier = TrustTier.TRUSTED
    if source.get("kind") == "pull_request":
        head = source.get("head_repository")
        if not head or head != source.get("repository"):
            tier = TrustTier.READ_ONLY
    if requested == TrustTier.READ_ONLY:
        tier = TrustTier.READ_ONLY
    return tier


def _bundle_tools(org: Organization, names: list[str]) -> list[dict]:
    frozen = []
    for name in names:
        bundle = CapabilityBundle.objects.filter(org=org, name=name).first()
        if bundle is None:
            raise Invalid(f"no capability bundle named {name!r}")
        for tool in bundle.tools.all():
            frozen.append(
                {
                    "name": tool.name,
                    "access": tool.access,
                    "match_argument": tool.match_argument,
                    "secrets": tool.secrets,
                    "schema": tool.schema,
                    "definition_digest": tool.definition_digest,
                    "bundle_name": bundle.name,
                }
            )
    return frozen


def _connection_tools(connection: Connection) -> list[dict]:
    from governance.mcp_wire import tool_digest

    frozen = []
    for wire in connection.photograph:
        annotations = wire.get("annotations") or {}
        read_only = annotations.get("readOnlyHint") is True
        frozen.append(
            {
                "name": f"{connection.slug}.{wire['name']}"[:_FROZEN_NAME_LENGTH],
                "upstream_name": wire["name"],
                # No readOnlyHint means write: fail toward write.
                "access": Access.READ if read_only else Access.WRITE,
                "match_argument": None,
                "secrets": False,
                "schema": wire.get("inputSchema") or {"type": "object"},
                "definition_digest": tool_digest(wire),
                "connection": connection,
            }
        )
    return frozen


_FROZEN_NAME_LENGTH = FrozenTool._meta.get_field("name").max_length


def _name_refused(name: str) -> str | None:
    # A photograph taken before refreshes refused such names can still hold one.
    if TOOL_NAME.fullmatch(name):
        return None
    return "its name is outside the tool names fluidbox allows ([A-Za-z0-9_.-], at most 128)"


def _connections(org: Organization, slugs: list[str], invoked_by: User | None):
    connections = []
    for slug in slugs:
        connection = Connection.objects.filter(org=org, slug=slug).first()
        if connection is None:
            raise Invalid(f"no connection named {slug!r}")
        if connection.status != ConnectionStatus.ACTIVE:
            raise Invalid(f"connection {slug!r} is {connection.status}")
        if not connection.photograph_digest:
            raise Invalid(f"connection {slug!r} has no photograph yet: refresh its tools first")
        if connection.is_personal:
            if invoked_by is None:
                raise Invalid(f"invoked_by is required with personal connection {slug!r}")
            if connection.owner_id != invoked_by.pk:
                raise Invalid(f"personal connection {slug!r} belongs to someone else")
        connections.append(connection)
    return connections


def _consent(connection: Connection, created_by: Actor | None) -> str:
    """A personal connection is bound without asking only when its owner made the run with
    their own credential; an operator's `invoked_by` is a claim, not the owner's consent.
    A connection whose credential someone else gave (`credential_from_owner`) asks even then:
    its calls would go out under a credential the owner never chose."""
    if not connection.is_personal:
        return BindingConsent.NOT_NEEDED
    user = created_by.user if created_by is not None and created_by.is_human else None
    if user is not None and user.pk == connection.owner_id and connection.credential_from_owner:
        return BindingConsent.OWNER
    return BindingConsent.PENDING


def _creator_label(created_by: Actor | None) -> str:
    if created_by is None:
        return ""
    if created_by.kind == ActorKind.OPERATOR and created_by.api_key_id is not None:
        from governance.models import ApiKey

        name = ApiKey.objects.filter(pk=created_by.api_key_id).values_list("name", flat=True)
        return f"operator key {name.first() or created_by.api_key_id}"
    return created_by.label


def _autonomy_check(
    org: Organization, created_by: Actor | None, autonomy: str, fallback: str
) -> None:
    """An autonomous run of a policy whose fallback is `allow` allows every call the policy
    asks about, with no person deciding: a person starts one only if they could approve
    those calls themselves (an admin or approver of the org). A member's own runs ask."""
    if created_by is None or not created_by.is_human:
        return
    if autonomy != Autonomy.AUTONOMOUS or fallback != AutonomousFallback.ALLOW:
        return
    if not created_by.has_role(org.pk, *DECIDING_ROLES):
        raise Forbidden(
            "an autonomous run of this policy allows what the policy asks a person about; "
            "only an admin, an approver or an operator key may start one. Start it supervised"
        )


def _human_invoker(org: Organization, created_by: Actor, invoked_by: str | None) -> str:
    """A person creates runs as themselves, in an org where they may act."""
    role = created_by.role_in(org.pk)
    if role is None or role == Role.AUDITOR:
        raise Forbidden("creating a run takes an operator key or a member who is not an auditor")
    username = created_by.user.get_username()
    if invoked_by and invoked_by != username:
        raise Forbidden("a person creates runs as themselves: leave invoked_by out or use yours")
    return username


@transaction.atomic
def run_create(
    *,
    org: Organization,
    agent: str,
    policy_name: str,
    autonomy: str,
    source: dict,
    budget_tokens: int,
    bundles: list[str],
    connections: list[str],
    invoked_by: str | None = None,
    trust_tier: str | None = None,
    created_by: Actor | None = None,
) -> CreatedRun:
    """Freeze a run. `created_by` is the caller: without it (or with an operator key) a
    personal connection's binding waits for its owner's consent."""
    if created_by is not None and created_by.is_human:
        invoked_by = _human_invoker(org, created_by, invoked_by)
    policy = Policy.objects.select_related("current_version").filter(org=org, name=policy_name)
    policy = policy.first()
    if policy is None or policy.current_version is None:
        raise Invalid(f"no policy named {policy_name!r}")
    _autonomy_check(org, created_by, autonomy, policy.current_version.autonomous_fallback)
    invoker = None
    if invoked_by:
        invoker = User.objects.filter(username=invoked_by).first()
        if (
            invoker is None
            or not invoker.is_active  # a deactivated account answers for nothing
            or not Membership.objects.filter(org=org, user=invoker, is_active=True).exists()
        ):
            raise Invalid(f"invoked_by {invoked_by!r} is not an active member of {org.slug}")
    if len(set(bundles)) != len(bundles) or len(set(connections)) != len(connections):
        raise Invalid("bundles and connections must not repeat")
    attached = _connections(org, connections, invoker)
    tools = _bundle_tools(org, bundles)
    for connection in attached:
        tools.extend(_connection_tools(connection))
    names = [tool["name"] for tool in tools]
    if len(set(names)) != len(names):
        duplicates = sorted({name for name in names if names.count(name) > 1})
        raise Invalid(f"tool names collide across bundles: {', '.join(duplicates)}")

    token = new_secret_token(RUN_TOKEN_PREFIX)
    tier = trust_tier_for(source, trust_tier)
    creator = _creator_label(created_by)
    for tool in tools:
        tool["guard_error"] = _name_refused(tool["name"]) or guard_schema(tool["schema"]) or ""
        tool["callable"] = not tool["guard_error"]
    tool_set_digest = digest_of(
        sorted([tool["name"], tool["definition_digest"], tool["callable"]] for tool in tools)
    )
    run = Run.objects.create(
        org=org,
        agent=agent,
        source=source,
        invoked_by=invoker,
        policy_version=policy.current_version,
        policy_digest=policy.current_version.digest,
        autonomy=autonomy,
        trust_tier=tier,
        budget_tokens=budget_tokens,
        tool_set_digest=tool_set_digest,
        session_token_hash=hash_secret_token(token),
        created_by=creator,
    )
    FrozenTool.objects.bulk_create(FrozenTool(run=run, **tool) for tool in tools)
    FrozenBinding.objects.bulk_create(
        FrozenBinding(
            run=run,
            connection=connection,
            authorization_generation=connection.authorization_generation,
            photograph_digest=connection.photograph_digest,
            consent=_consent(connection, created_by),
        )
        for connection in attached
    )
    RunBudget.objects.create(run=run, allowance=budget_tokens)
    RunCounter.objects.create(run=run)
    event_append(
        run_id=run.pk,
        type=EventType.RUN_CREATED,
        redacted=redact(
            {
                "agent": agent,
                "policy": policy.name,
                "policy_version": policy.current_version.number,
                "policy_digest": policy.current_version.digest,
                "autonomy": autonomy,
                "trust_tier": tier,
                "source": source,
                "invoked_by": invoked_by,
                "created_by": creator or None,
                "budget_tokens": budget_tokens,
                "tool_set_digest": tool_set_digest,
                "tools": sorted(names),
                "uncallable": sorted(t["name"] for t in tools if not t["callable"]),
                "connections": [
                    {
                        "slug": c.slug,
                        "generation": c.authorization_generation,
                        "consent": _consent(c, created_by),
                    }
                    for c in attached
                ],
            }
        ),
    )
    return CreatedRun(run=run, session_token=token)


@transaction.atomic
def run_finish(*, run: Run, actor_label: str) -> Run:
    chain_lock(run_id=run.pk)  # before the run and its approvals: see chain_lock
    won = Run.objects.filter(pk=run.pk, status=RunStatus.ACTIVE).update(
        status=RunStatus.FINISHED, finished_at=timezone.now()
    )
    if won:
        approvals_close_for_run(run_id=run.pk)
        # Only these calls' broker records may follow `run.finished` in the chain; a checker
        # flags anything else after it, and a run's bundle that shows them all is complete.
        in_flight = calls_in_flight(run)
        event_append(
            run_id=run.pk,
            type=EventType.RUN_FINISHED,
            redacted=redact({"finished_by": actor_label, "in_flight": in_flight}),
        )
    run.refresh_from_db()
    return run


def run_get(org: Organization, run_id) -> Run:
    run = Run.objects.filter(org=org, pk=run_id).first()
    if run is None:
        raise NotFound("no such run")
    return run


__all__ = ["Autonomy", "Conflict", "CreatedRun", "run_create", "run_finish", "trust_tier_for"]
