"""Deciding paused calls: once, by compare-and-swap, with the ledger in the same transaction."""

import logging
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import DatabaseError, transaction
from django.utils import timezone

from governance.authentication import Actor
from governance.errors import Conflict, Forbidden, ServiceError
from governance.models import Approval, ApprovalStatus, RunGrant
from governance.selectors import access_approval, may_decide
from governance.services.policies import policy_prepend_exact_rule
from governance.services.settlement import TIMED_OUT_REASON, approval_settle

logger = logging.getLogger(__name__)


class LedgerUnavailable(ServiceError):
    status = 503
    code = "ledger_unavailable"


@dataclass(frozen=True)
class Settlement:
    approval: Approval
    won: bool


def approval_decide(
    *, approval_id, actor: Actor, approve: bool, remember: bool = False
) -> Settlement:
    approval = access_approval(approval_id, actor)
    if not may_decide(approval, actor):
        raise Forbidden("you may not decide this approval")
    if remember and not approve:
        raise Conflict("remember applies to approvals only", code="invalid")
    try:
        with transaction.atomic():
            approval = Approval.objects.select_related("run", "policy_version__policy").get(
                pk=approval.pk
            )
            if approval.status == ApprovalStatus.PENDING and approval.expires_at <= timezone.now():
                approval_settle(
                    approval,
                    status=ApprovalStatus.TIMED_OUT,
                    decided_by=None,
                    remember=False,
                    reason=TIMED_OUT_REASON,
                )
                won = False
                expired = True
            else:
                expired = False
                won = approval_settle(
                    approval,
                    status=ApprovalStatus.APPROVED if approve else ApprovalStatus.DENIED,
                    decided_by=actor.user,
                    remember=remember and approve,
                    reason=(
                        f"approved by {actor.user.get_username()}"
                        if approve
                        else f"denied by {actor.user.get_username()}"
                    ),
                )
                if won and remember and approve:
                    _remember(approval, actor.user)
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


def _remember(approval: Approval, user: User) -> None:
    """Grant the same call for the rest of the run, and add an exact-match ALWAYS rule at
    the top of the policy as a new version (future runs only)."""
    RunGrant.objects.create(
        run=approval.run,
        call_key=approval.call_key,
        tool_definition_digest=approval.tool_definition_digest,
        policy_version=approval.policy_version,
        approval=approval,
    )
    policy_prepend_exact_rule(
        policy=approval.policy_version.policy,
        call_key=approval.call_key,
        author=user,
        note=f"Approve & Remember (approval {approval.pk})",
    )
