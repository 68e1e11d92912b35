"""Settling a paused call: the compare-and-swap on its approval and, for the winner only,
the ledger records, in the caller's transaction.

Deciders, the gate (which settles an expired approval it finds), the worker's timeout and
finishing a run all settle the same way; this module sits below all of them and imports
none of them.
"""

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from governance.models import (
    Approval,
    ApprovalStatus,
    Decision,
    RememberScope,
    Source,
    ToolCall,
)
from governance.observability import metrics, tracing
from governance.services.wakeup import announce_decision
from ledger.models import EventType
from ledger.redaction import redact
from ledger.services import chain_lock, event_append, event_data

TIMED_OUT_REASON = "approval timed out"
RUN_FINISHED_REASON = "the run finished before anyone decided"


def decision_event_data(
    call: ToolCall,
    *,
    policy_version: int,
    policy_digest: str,
    definition_digest: str | None,
    **extra,
) -> dict:
    """The `tool.decision` event of a call, whoever settled it. It names what decided it: the
    policy version and its digest, and the digest of the tool definition the run froze (None
    for a tool it never froze). `extra` carries the trace ids (`tracing.ledger_ids`), so an
    auditor can go from the timeline row to the trace, and `fail_closed` when an error
    decided."""
    data = {
        "session_id": call.session_id,
        "tool_call_id": call.tool_call_id,
        "tool": call.tool,
        "decision": call.decision,
        "source": call.source or None,
        "reason": call.reason,
        "rule": call.rule,
        "policy_version": policy_version,
        "policy_digest": policy_digest,
        "definition_digest": definition_digest or None,
        **extra,
    }
    if call.original_verdict:
        data["original_verdict"] = call.original_verdict
        data["verdict"] = call.decision
    return data


def approval_settle(
    approval: Approval,
    *,
    status: str,
    decided_by: User | None,
    remember: str,
    reason: str,
) -> bool:
    """The compare-and-swap from pending and, for the winner only, the ledger entries.
    Runs inside the caller's transaction: if an append fails, the settlement rolls back.
    `remember` is a `RememberScope` (empty: nothing remembered)."""
    chain_lock(run_id=approval.run_id)  # before the approval and the call: see chain_lock
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
    event_append(
        run_id=approval.run_id,
        type=EventType.APPROVAL_DECIDED,
        redacted=redact(
            {
                "approval_id": approval.pk,
                "tool_call_id": approval.tool_call_id,
                "tool": approval.tool,
                "outcome": str(status),
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
                **_requested_trace(approval),
            )
        ),
    )
    metrics.approval_settled(outcome=str(status), requested_at=approval.created_at)
    announce_decision(approval.pk)
    return True


def _requested_trace(approval: Approval) -> dict:
    """The trace of the gate call that asked: the decision answers that call, so its
    tool.decision points at the agent's trace, not at the approver's click."""
    if not tracing.ENABLED:
        return {}
    data = event_data(approval.run_id, EventType.APPROVAL_REQUESTED, approval_id=approval.pk)
    if data is None or not data.get("trace_id"):
        return {}
    return {"trace_id": data["trace_id"], "span_id": data.get("span_id")}


def approval_expire(*, approval_id: int) -> bool:
    """Settle one approval as timed_out if it is pending and due; True if this call did."""
    with transaction.atomic():
        approval = (
            Approval.objects.select_related("run", "policy_version").filter(pk=approval_id).first()
        )
        if approval is None or approval.status != ApprovalStatus.PENDING:
            return False
        if approval.expires_at > timezone.now():
            return False
        return approval_settle(
            approval,
            status=ApprovalStatus.TIMED_OUT,
            decided_by=None,
            remember=RememberScope.NONE,
            reason=TIMED_OUT_REASON,
        )


def approval_expire_if_due(approval: Approval) -> Approval:
    """Settle an expired pending approval as timed_out in its own transaction."""
    if approval.status != ApprovalStatus.PENDING or approval.expires_at > timezone.now():
        return approval
    approval_expire(approval_id=approval.pk)
    approval.refresh_from_db()
    return approval


def approvals_sweep() -> int:
    """Settle every expired pending approval (the sweeper's job when no call returns)."""
    due = Approval.objects.filter(
        status=ApprovalStatus.PENDING, expires_at__lte=timezone.now()
    ).values_list("pk", flat=True)
    return sum(1 for pk in list(due) if approval_expire(approval_id=pk))


def approvals_close_for_run(*, run_id) -> int:
    """Deny every approval still pending when its run finishes (inside run_finish's
    transaction): nobody should be offered a call whose run is over."""
    closed = 0
    pending = (
        Approval.objects.select_related("run", "policy_version")
        .filter(run_id=run_id, status=ApprovalStatus.PENDING)
        .order_by("pk")
    )
    for approval in pending:
        closed += approval_settle(
            approval,
            status=ApprovalStatus.DENIED,
            decided_by=None,
            remember=RememberScope.NONE,
            reason=RUN_FINISHED_REASON,
        )
    return closed
