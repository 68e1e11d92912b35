"""Who may call which endpoint, by the kind of credential presented."""

from rest_framework.permissions import BasePermission

from governance.authentication import Actor, ActorKind


def _actor(request) -> Actor | None:
    actor = getattr(request, "auth", None)
    return actor if isinstance(actor, Actor) else None


class IsOperator(BasePermission):
    message = "this endpoint takes an operator API key"

    def has_permission(self, request, view) -> bool:
        actor = _actor(request)
        return actor is not None and actor.kind == ActorKind.OPERATOR


class IsRunner(BasePermission):
    message = "this endpoint takes the run session token"

    def has_permission(self, request, view) -> bool:
        actor = _actor(request)
        return actor is not None and actor.kind == ActorKind.RUNNER


class IsHuman(BasePermission):
    message = "this endpoint is for people: use the portal session or a personal key"

    def has_permission(self, request, view) -> bool:
        actor = _actor(request)
        return actor is not None and actor.is_human


class IsOperatorOrHuman(BasePermission):
    message = "this endpoint takes an operator key, a personal key or the portal session"

    def has_permission(self, request, view) -> bool:
        actor = _actor(request)
        return actor is not None and (actor.kind == ActorKind.OPERATOR or actor.is_human)


class IsRunnerOrOperator(BasePermission):
    message = "this endpoint takes the run session token or an operator key"

    def has_permission(self, request, view) -> bool:
        actor = _actor(request)
        return actor is not None and actor.kind in (ActorKind.RUNNER, ActorKind.OPERATOR)


class AnyActor(BasePermission):
    def has_permission(self, request, view) -> bool:
        return _actor(request) is not None
