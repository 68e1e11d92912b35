"""Reads with their permission logic: `access_<thing>(id, actor)` fetches or raises NotFound."""

from uuid import UUID

from django.db.models import Q, QuerySet

from governance.authentication import Actor, ActorKind
from governance.errors import Forbidden, NotFound
from governance.models import (
    DECIDING_ROLES,
    Approval,
    ApprovalStatus,
    BindingConsent,
    Connection,
    FrozenBinding,
    Organization,
    Policy,
    Role,
    Run,
)
from governance.object_ids import object_id

READ_ROLES = (Role.ADMIN, Role.APPROVER, Role.AUDITOR)


def _uuid(value) -> UUID:
    try:
        return value if isinstance(value, UUID) else UUID(str(value))
    except ValueError:
        raise NotFound("no such run") from None


def access_run(run_id, actor: Actor) -> Run:
    """The run if the actor may read it: its own runner, an operator of its org, or staff."""
    run_id = _uuid(run_id)
    if actor.kind == ActorKind.RUNNER:
        if actor.run_id != run_id:
            raise NotFound("no such run")
        if actor.run is not None:
            return actor.run
    run = Run.objects.select_related("policy_version__policy", "org").filter(pk=run_id).first()
    if run is None:
        raise NotFound("no such run")
    if actor.kind == ActorKind.RUNNER:
        if actor.run_id != run.pk:
            raise NotFound("no such run")
        return run
    if actor.kind == ActorKind.OPERATOR:
        if actor.org_id != run.org_id:
            raise NotFound("no such run")
        return run
    if not may_read_run(run, actor):
        raise NotFound("no such run")
    return run


def may_read_run(run: Run, actor: Actor) -> bool:
    """For a person: a reading role in the run's org, or a member who invoked the run."""
    role = actor.role_in(run.org_id)
    if role is None:
        return False
    return role in READ_ROLES or run.invoked_by_id == actor.user.pk


def access_run_as_runner(run_id, actor: Actor) -> Run:
    if actor.kind != ActorKind.RUNNER:
        raise Forbidden("this endpoint takes the run session token")
    return access_run(run_id, actor)


def access_policy(org_id: int, name: str) -> Policy:
    policy = (
        Policy.objects.select_related("current_version").filter(org_id=org_id, name=name).first()
    )
    if policy is None or policy.current_version is None:
        raise NotFound(f"no policy named {name!r}")
    return policy


def org_for_policy_reader(actor: Actor, name: str) -> Policy:
    """The named policy in the first org where the actor is an admin or auditor."""
    if actor.kind == ActorKind.OPERATOR:
        return access_policy(actor.org_id, name)
    for org_id, role in sorted(actor.roles.items()):
        if role in (Role.ADMIN, Role.AUDITOR):
            policy = Policy.objects.filter(org_id=org_id, name=name).first()
            if policy is not None and policy.current_version_id:
                return access_policy(org_id, name)
    raise NotFound(f"no policy named {name!r}")


def org_for_policy_writer(actor: Actor) -> Organization:
    """The org whose policies the actor may save: an operator key's, or the one org where a
    person is an admin."""
    if actor.kind == ActorKind.OPERATOR:
        return Organization.objects.get(pk=actor.org_id)
    orgs = [org_id for org_id, role in actor.roles.items() if role == Role.ADMIN]
    if len(orgs) != 1:
        raise Forbidden("saving policies takes an operator key or an admin of one organization")
    return Organization.objects.get(pk=orgs[0])


def access_connection(connection_id, actor: Actor) -> Connection:
    connection_id = object_id(connection_id, "no such connection")
    connection = Connection.objects.select_related("owner").filter(pk=connection_id).first()
    if connection is None or connection.org_id not in actor.org_ids:
        raise NotFound("no such connection")
    if actor.kind == ActorKind.OPERATOR:
        return connection
    role = actor.role_in(connection.org_id)
    if role in READ_ROLES:
        return connection
    if connection.is_personal and actor.user is not None and connection.owner_id == actor.user.pk:
        return connection
    raise NotFound("no such connection")


def visible_connections(actor: Actor) -> QuerySet[Connection]:
    """The connections `access_connection` would hand this actor, one query."""
    if actor.kind == ActorKind.OPERATOR:
        return Connection.objects.filter(org_id=actor.org_id)
    reading = [org_id for org_id in actor.org_ids if actor.role_in(org_id) in READ_ROLES]
    owned = Q(org_id__in=actor.org_ids, owner_id=actor.user.pk) if actor.user else Q(pk__in=[])
    return Connection.objects.filter(Q(org_id__in=reading) | owned)


def may_decide(approval: Approval, actor: Actor) -> bool:
    """The owner rule: a personal connection's call is decided only by its owner."""
    if not actor.is_human or actor.user is None:
        return False
    if approval.connection_id is not None and approval.connection.is_personal:
        owner_id = approval.connection.owner_id
        if owner_id != actor.user.pk or approval.run.invoked_by_id != owner_id:
            return False
        return actor.role_in(approval.run.org_id) is not None
    return actor.has_role(approval.run.org_id, *DECIDING_ROLES)


def may_remember_in_policy(approval: Approval, actor: Actor) -> bool:
    """Whether the decider may also add Approve & Remember's rule for new runs. The rule is a
    new version of the organization's policy, at its top: only the roles that decide calls
    (admin, approver) may add one. The owner of a personal connection decides its calls
    whatever their role, but a member or auditor among them remembers for the run only."""
    return may_decide(approval, actor) and actor.has_role(approval.run.org_id, *DECIDING_ROLES)


def decidable_approvals(actor: Actor) -> QuerySet[Approval]:
    """Approvals the actor may decide (the inbox), owner rule included."""
    if not actor.is_human or actor.user is None:
        return Approval.objects.none()
    deciding_orgs = [org for org, role in actor.roles.items() if role in DECIDING_ROLES]
    member_orgs = list(actor.roles)
    owned_personal = Q(
        connection__kind="personal",
        connection__owner=actor.user,
        run__invoked_by=actor.user,
        run__org_id__in=member_orgs,
    )
    non_personal = Q(run__org_id__in=deciding_orgs) & (
        Q(connection__isnull=True) | ~Q(connection__kind="personal")
    )
    return (
        Approval.objects.filter(owned_personal | non_personal)
        .select_related("run", "connection", "policy_version__policy", "call")
        .order_by("expires_at")
    )


def approvals_listed(actor: Actor, status: str | None, limit: int) -> list[Approval]:
    """What the approvals list shows: those still pending first, the soonest to expire
    first; then decided ones, the latest first. Oldest first, a long-lived organization's
    first `limit` were all decided long ago and hid every pending one."""
    approvals = decidable_approvals(actor).select_related("decided_by", "call")
    pending = approvals.filter(status=ApprovalStatus.PENDING)
    settled = approvals.exclude(status=ApprovalStatus.PENDING).order_by("-expires_at", "-pk")
    if status == ApprovalStatus.PENDING:
        return list(pending[:limit])
    if status:
        return list(settled.filter(status=status)[:limit])
    shown = list(pending[:limit])
    return shown + list(settled[: limit - len(shown)])


def pending_approvals_for(actor: Actor) -> QuerySet[Approval]:
    return decidable_approvals(actor).filter(status=ApprovalStatus.PENDING)


def access_approval(approval_id, actor: Actor) -> Approval:
    approval_id = object_id(approval_id, "no such approval")
    approval = (
        Approval.objects.select_related("run", "connection", "policy_version__policy")
        .filter(pk=approval_id)
        .first()
    )
    if approval is None or approval.run.org_id not in actor.org_ids:
        raise NotFound("no such approval")
    return approval


def bindings_owned_by(actor: Actor) -> QuerySet[FrozenBinding]:
    """Bindings of the actor's own personal connections, in orgs where they are a member.
    Nobody else sees or answers these: consent is the owner's alone."""
    if not actor.is_human or actor.user is None:
        return FrozenBinding.objects.none()
    return (
        FrozenBinding.objects.filter(
            connection__kind="personal",
            connection__owner=actor.user,
            run__org_id__in=list(actor.roles),
        )
        .exclude(consent__in=(BindingConsent.NOT_NEEDED, BindingConsent.OWNER))
        .select_related("run", "connection", "consent_decided_by", "run__invoked_by")
        .order_by("-run__created_at", "pk")
    )


def access_binding_for_owner(binding_id, actor: Actor) -> FrozenBinding:
    binding_id = object_id(binding_id, "no such binding")
    binding = bindings_owned_by(actor).filter(pk=binding_id).first()
    if binding is None:
        raise NotFound("no such binding")
    return binding
