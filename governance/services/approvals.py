"""Deciding paused calls: once, by compare-and-swap, with the ledger in the same transaction."""

import logging
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import DatabaseError, transaction
from django.utils import timezone

from governance.authentication import Actor
from governance.errors import Conflict, Forbidden, Invalid, NotFound, ServiceError
from governance.models import Approval, ApprovalStatus, RememberScope, RunGrant
from governance.selectors import (
    access_approval,
    may_decide,
    may_read_run,
    may_remember_in_policy,
)
from governance.services.policies import exact_rule_pattern, policy_prepend_exact_rule
from governance.services.settlement import TIMED_OUT_REASON, approval_settle
from ledger.services import chain_lock

logger = logging.getLogger(__name__)


class LedgerUnavailable(ServiceError):
    status = 503
    code = "ledger_unavailable"


@dataclass(frozen=True)
class Settlement:
    approval: Approval
    won: bool


def approval_decide(
    *, approval_id, actor: Actor, approve: bool, remember: str = RememberScope.NONE
) -> Settlement:
    """Approve or deny once. `remember` is `RememberScope.RUN` (this exact call for the rest of
    the run) or `RememberScope.POLICY` (that, and a rule for future runs that sees only
    `tool:match_string`: the wider scope the approver chose explicitly)."""
    if remember not in RememberScope.values:
        raise Invalid("remember must be run or policy")
    approval = access_approval(approval_id, actor)
    if not may_decide(approval, actor):
        if not actor.is_human or not may_read_run(approval.run, actor):
            # A member's key aimed at another person's run: the same answer as a made-up id,
            # so an id does not tell that a call of theirs waits.
            raise NotFound("no such approval")
        raise Forbidden("you may not decide this approval")
    if remember and not approve:
        raise Invalid("remember applies to approvals only")
    if remember == RememberScope.POLICY:
        if not may_remember_in_policy(approval, actor):
            # The owner of a personal connection decides its calls whatever their role; a
            # rule for new runs is a new version of the organization's policy, which is not.
            raise Forbidden(
                "a rule for new runs changes the organization's policy: only an admin or an "
                "approver may add one. Approve, or remember for this run only"
            )
        # Refused before anything is decided.
        exact_rule_pattern(approval.call_key, approval.call.arguments)
    try:
        with transaction.atomic():
            # The run's counter before the row is read (see chain_lock): a decision that
            # waited for it past the expiry reads the clock after the wait, and times out.
            chain_lock(run_id=approval.run_id)
            approval = Approval.objects.select_related("run", "call", "policy_version__policy").get(
                pk=approval.pk
            )
            if approval.status == ApprovalStatus.PENDING and approval.expires_at <= timezone.now():
                approval_settle(
                    approval,
                    status=ApprovalStatus.TIMED_OUT,
                    decided_by=None,
                    remember=RememberScope.NONE,
                    reason=TIMED_OUT_REASON,
                )
                won = False
                expired = True
            elif approval.status == ApprovalStatus.TIMED_OUT:
                # Settled at its expiry already (the worker's sweep, or a late decision before
                # this one): this decision is as late, and is told so, not that it lost a race.
                won, expired = False, True
            else:
                expired = False
                won = approval_settle(
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
    tool = approval.run.frozen_tools.filter(name=approval.tool).first()
    policy_prepend_exact_rule(
        policy=approval.policy_version.policy,
        call_key=approval.call_key,
        tool=approval.tool,
        arguments=approval.call.arguments,
        match_argument=tool.match_argument if tool else None,
        author=user,
        note=f"Approve & Remember (approval {approval.pk})",
    )
