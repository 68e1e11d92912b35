"""Deciding paused calls: once, by compare-and-swap, with the ledger in the same transaction."""

import logging
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import DatabaseError, transaction
from django.utils import timezone

from governance.authentication import Actor
from governance.errors import Conflict, Forbidden, ServiceError
from governance.models import (
    Approval,
    ApprovalStatus,
    Decision,
    RememberScope,
    RunGrant,
    Source,
    ToolCall,
)
from governance.selectors import access_approval, may_decide
from governance.services.wakeup import announce_decision
from ledger.models import EventType
from ledger.redaction import redact
from ledger.services import event_append

logger = logging.getLogger(__name__)

TIMED_OUT_REASON = "approval timed out"


class LedgerUnavailable(ServiceError):
    status = 503
    code = "ledger_unavailable"


@dataclass(frozen=True)
class Settlement:
    approval: Approval
    won: bool


def _settle_locked(
    approval: Approval,
    *,
    status: str,
    decided_by: User | None,
    remember: str,
    reason: str,
) -> bool:
    """The compare-and-swap and, for the winner only, the ledger entries."""
    from governance.services.gate import decision_event_data

    now = timezone.now()
    won = Approval.objects.filter(pk=approval.pk, status=ApprovalStatus.PENDING).update(
        status=status,
        decided_by=decided_by,
        decided_at=now,
        remember=bool(remember),
        remember_scope=remember,
    )
    if not won:
        return False
    allowed = status == ApprovalStatus.APPROVED
    tool_error = "" if allowed else f"Permission denied by fluidbox (approval): {reason}"
    ToolCall.objects.filter(pk=approval.call_id).update(
        decision=Decision.ALLOW if allowed else Decision.DENY,
        source=Source.APPROVAL,
        reason=reason,
        tool_error=tool_error,
        decided_at=now,
    )
    call = ToolCall.objects.get(pk=approval.call_id)
    decider = decided_by.get_username() if decided_by else None
    outcome = {"approved": "approved", "denied": "denied", "timed_out": "timed_out"}[status]
    event_append(
        run_id=approval.run_id,
        type=EventType.APPROVAL_DECIDED,
        redacted=redact(
            {
                "approval_id": approval.pk,
                "tool_call_id": approval.tool_call_id,
                "tool": approval.tool,
                "outcome": outcome,
                "decided_by": decider,
                "remember": bool(remember),
                "remember_scope": remember or None,
                "policy_version": approval.policy_version.number,
                "policy_digest": approval.policy_version.digest,
                "definition_digest": approval.tool_definition_digest or None,
            }
        ),
    )
    event_append(
        run_id=approval.run_id,
        type=EventType.TOOL_DECISION,
        redacted=redact(
            decision_event_data(
                call,
                policy_version=approval.policy_version.number,
                policy_digest=approval.policy_version.digest,
                definition_digest=approval.tool_definition_digest,
                approval_id=approval.pk,
                decided_by=decider,
            )
        ),
    )
    announce_decision(approval.pk)
    return True


def approval_decide(
    *, approval_id, actor: Actor, approve: bool, remember: str = RememberScope.NONE
) -> Settlement:
    """Approve or deny once. `remember` is `RememberScope.RUN` (this exact call for the rest of
    the run) or `RememberScope.POLICY` (that, and a rule for future runs that sees only
    `tool:match_string`: the wider scope the approver chose explicitly)."""
    if remember not in RememberScope.values:
        raise Conflict("remember must be run or policy", code="invalid")
    approval = access_approval(approval_id, actor)
    if not may_decide(approval, actor):
        raise Forbidden("you may not decide this approval")
    if remember and not approve:
        raise Conflict("remember applies to approvals only", code="invalid")
    try:
        with transaction.atomic():
            approval = Approval.objects.select_related("run", "call", "policy_version__policy").get(
                pk=approval.pk
            )
            if approval.status == ApprovalStatus.PENDING and approval.expires_at <= timezone.now():
                _settle_locked(
                    approval,
                    status=ApprovalStatus.TIMED_OUT,
                    decided_by=None,
                    remember=RememberScope.NONE,
                    reason=TIMED_OUT_REASON,
                )
                won = False
                expired = True
            else:
                expired = False
                won = _settle_locked(
                    approval,
                    status=ApprovalStatus.APPROVED if approve else ApprovalStatus.DENIED,
                    decided_by=actor.user,
                    remember=remember if approve else RememberScope.NONE,
                    reason=(
                        f"approved by {actor.user.get_username()}"
                        if approve
                        else f"denied by {actor.user.get_username()}"
                    ),
                )
                if won and remember and approve:
                    _remember(approval, actor.user, remember)
    except DatabaseError:
        logger.exception("deciding approval %s failed; nothing was recorded", approval.pk)
        raise LedgerUnavailable("the decision could not be recorded; nothing changed") from None
    approval.refresh_from_db()
    if expired:
        raise Conflict(
            "this approval expired before the decision arrived",
            code="expired",
            extra={"status": approval.status},
        )
    return Settlement(approval=approval, won=won)


def _remember(approval: Approval, user: User, scope: str) -> None:
    """Grant exactly the call the approver saw (its full arguments, by digest) for the rest
    of the run; for `policy`, also add an exact-match ALWAYS rule at the top of the policy as
    a new version (future runs only; it sees only the call key, so it covers more)."""
    from governance.services.policies import policy_prepend_exact_rule

    RunGrant.objects.create(
        run=approval.run,
        call_key=approval.call_key,
        arguments_digest=approval.call.arguments_digest,
        tool_definition_digest=approval.tool_definition_digest,
        policy_version=approval.policy_version,
        approval=approval,
    )
    if scope != RememberScope.POLICY:
        return
    policy_prepend_exact_rule(
        policy=approval.policy_version.policy,
        call_key=approval.call_key,
        author=user,
        note=f"Approve & Remember (approval {approval.pk})",
    )


def approval_expire_if_due(approval: Approval) -> Approval:
    """Settle an expired pending approval as timed_out in its own transaction."""
    if approval.status != ApprovalStatus.PENDING or approval.expires_at > timezone.now():
        return approval
    approval_expire(approval_id=approval.pk)
    approval.refresh_from_db()
    return approval


def approval_expire(*, approval_id: int) -> bool:
    with transaction.atomic():
        approval = (
            Approval.objects.select_related("run", "policy_version").filter(pk=approval_id).first()
        )
        if approval is None or approval.status != ApprovalStatus.PENDING:
            return False
        if approval.expires_at > timezone.now():
            return False
        return _settle_locked(
            approval,
            status=ApprovalStatus.TIMED_OUT,
            decided_by=None,
            remember=RememberScope.NONE,
            reason=TIMED_OUT_REASON,
        )


RUN_FINISHED_REASON = "the run finished before anyone decided"


def approvals_close_for_run(*, run_id) -> int:
    """Deny every approval still pending when its run finishes (inside run_finish's
    transaction): nobody should be offered a call whose run is over."""
    closed = 0
    pending = Approval.objects.select_related("run", "policy_version").filter(
        run_id=run_id, status=ApprovalStatus.PENDING
    )
    for approval in pending:
        closed += _settle_locked(
            approval,
            status=ApprovalStatus.DENIED,
            decided_by=None,
            remember=RememberScope.NONE,
            reason=RUN_FINISHED_REASON,
        )
    return closed


def approvals_sweep() -> int:
    """Settle every expired pending approval (the sweeper's job when no call returns)."""
    due = Approval.objects.filter(
        status=ApprovalStatus.PENDING, expires_at__lte=timezone.now()
    ).values_list("pk", flat=True)
    return sum(1 for pk in list(due) if approval_expire(approval_id=pk))


def schedule_approval_followups(approval: Approval) -> None:
    """After commit: the timeout task at expiry and the notifications, both on the worker."""
    from governance.tasks import enqueue_approval_followups

    transaction.on_commit(lambda: enqueue_approval_followups(approval.pk, approval.expires_at))
