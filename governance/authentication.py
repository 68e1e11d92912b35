"""Who is calling: operator keys, personal keys, run session tokens and portal sessions."""

from dataclasses import dataclass, field
from enum import StrEnum
from uuid import UUID

from django.contrib.auth.models import User
from rest_framework import authentication, exceptions

from governance.models import (
    API_KEY_PREFIX,
    RUN_TOKEN_PREFIX,
    ApiKey,
    Membership,
    Role,
    Run,
    RunStatus,
    hash_secret_token,
)
from governance.policy_store import FrozenVersionMissing
from governance.run_sessions import agent_secrets_stamp_as_read, run_for_session_token
from governance.services.agent_secrets import register_for_masking


class ActorKind(StrEnum):
    OPERATOR = "operator"
    PERSONAL = "personal"
    RUNNER = "runner"
    PORTAL = "portal"


@dataclass(frozen=True)
class Actor:
    """The authenticated caller, as every selector and service sees it."""

    kind: ActorKind
    user: User | None = None
    org_id: int | None = None
    run_id: UUID | None = None
    api_key_id: int | None = None
    roles: dict[int, str] = field(default_factory=dict)
    # A runner's run, loaded once with what the gate reads first (saves queries per call).
    run: Run | None = field(default=None, compare=False, repr=False)

    @property
    def is_human(self) -> bool:
        return self.kind in (ActorKind.PERSONAL, ActorKind.PORTAL)

    @property
    def org_ids(self) -> frozenset[int]:
        if self.kind in (ActorKind.OPERATOR, ActorKind.RUNNER):
            return frozenset({self.org_id})
        return frozenset(self.roles)

    def role_in(self, org_id: int) -> str | None:
        return self.roles.get(org_id)

    def has_role(self, org_id: int, *roles: str) -> bool:
        return self.roles.get(org_id) in roles

    @property
    def label(self) -> str:
        if self.user is not None:
            return self.user.get_username()
        if self.kind == ActorKind.RUNNER:
            return f"runner:{self.run_id}"
        return f"operator-key:{self.api_key_id}"


class ServicePrincipal:
    """`request.user` for callers that are not humans (operator keys, runners)."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False

    def __init__(self, actor: Actor) -> None:
        self.actor = actor
        self.pk = None

    def __str__(self) -> str:
        return self.actor.label

    def get_username(self) -> str:
        return self.actor.label


def active_roles(user: User, *, org_id: int | None = None) -> dict[int, str]:
    memberships = Membership.objects.filter(user=user, is_active=True)
    if org_id is not None:
        memberships = memberships.filter(org_id=org_id)
    return dict(memberships.values_list("org_id", "role"))


def _bearer_token(request) -> str | None:
    header = authentication.get_authorization_header(request)
    if not header:
        return None
    try:
        text = header.decode("ascii")
    except UnicodeDecodeError:
        raise exceptions.AuthenticationFailed("malformed Authorization header") from None
    parts = text.split()
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise exceptions.AuthenticationFailed(
            "malformed Authorization header: expected 'Bearer <key>'"
        )
    token = parts[1]
    if len(token) > 200 or not (
        token.startswith(API_KEY_PREFIX) or token.startswith(RUN_TOKEN_PREFIX)
    ):
        raise exceptions.AuthenticationFailed("unknown credential format")
    return token


class BearerAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer fbx_…` (API key) or `Bearer fbr_…` (run session token)."""

    def authenticate(self, request):
        token = _bearer_token(request)
        if token is None:
            return None
        digest = hash_secret_token(token)
        if token.startswith(RUN_TOKEN_PREFIX):
            return self._runner(digest, request)
        return self._api_key(digest)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="fluidbox"'

    def run_for_token(self, digest: str, request) -> Run | None:
        """The run a session token's digest names (a subclass may read more with it)."""
        return run_for_session_token(digest)

    def _runner(self, digest: str, request):
        try:
            run = self.run_for_token(digest, request)
        except FrozenVersionMissing:
            raise exceptions.AuthenticationFailed(
                "this run's frozen policy version is missing or altered; it cannot be decided"
            ) from None
        if run is None:
            raise exceptions.AuthenticationFailed("invalid run session token")
        if run.status != RunStatus.ACTIVE:
            raise exceptions.AuthenticationFailed("this run has finished; its token is void")
        # Before anything the runner sent is recorded: the sandbox may hold agent secrets
        # another process (or this one before a restart) served.
        register_for_masking(run.org_id, agent_secrets_stamp_as_read(run) or "")
        actor = Actor(kind=ActorKind.RUNNER, org_id=run.org_id, run_id=run.id, run=run)
        return ServicePrincipal(actor), actor

    def _api_key(self, digest: str):
        key = ApiKey.objects.select_related("user").filter(key_hash=digest).first()
        if key is None:
            raise exceptions.AuthenticationFailed("invalid API key")
        if key.revoked_at is not None:
            raise exceptions.AuthenticationFailed("this API key has been revoked")
        if key.user_id is None:
            actor = Actor(
                kind=ActorKind.OPERATOR,
                org_id=key.org_id,
                api_key_id=key.pk,
                roles={key.org_id: "operator"},
            )
            return ServicePrincipal(actor), actor
        if not key.user.is_active:
            raise exceptions.AuthenticationFailed("this API key's user is inactive")
        roles = active_roles(key.user, org_id=key.org_id)
        if not roles:
            raise exceptions.AuthenticationFailed("this API key's membership is inactive")
        actor = Actor(
            kind=ActorKind.PERSONAL,
            user=key.user,
            org_id=key.org_id,
            api_key_id=key.pk,
            roles=roles,
        )
        return key.user, actor


class PortalSessionAuthentication(authentication.SessionAuthentication):
    """The Django admin session, for humans clicking in the portal (CSRF enforced)."""

    def authenticate(self, request):
        result = super().authenticate(request)
        if result is None:
            return None
        user, _ = result
        return user, portal_actor(user)


def portal_actor(user: User) -> Actor:
    """A person in the portal. A Django superuser is an admin of every organization (the
    owner rule for personal connections still applies to them)."""
    if user.is_superuser:
        from governance.models import Organization

        roles = {pk: Role.ADMIN.value for pk in Organization.objects.values_list("pk", flat=True)}
    else:
        roles = active_roles(user)
    return Actor(kind=ActorKind.PORTAL, user=user, roles=roles)


__all__ = ["Actor", "ActorKind", "BearerAuthentication", "PortalSessionAuthentication", "Role"]
