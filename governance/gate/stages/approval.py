"""Stage 6: require_approval pauses for a human, or becomes the fallback when autonomous."""

from django.conf import settings

from governance.gate.context import CallContext
from governance.gate.decision import Decision, FailClosed, Outcome, allow, deny
from governance.gate.stages.policy import rule_json, segments_json
from governance.models import Approval, ApprovalStatus, Autonomy, RunGrant, Source
from governance.policy import Verdict

REQUIRE_APPROVAL = "require_approval"


def check_approval(ctx: CallContext) -> Decision:
    evaluation = ctx.evaluation
    rule = rule_json(evaluation)
    segments = segments_json(evaluation)
    why = evaluation.error or (
        f"rule {evaluation.rule.number} ({evaluation.rule.pattern!r}) asks for approval"
        if evaluation.rule
        else _concern(evaluation) or "no rule matches; the default is to ask"
    )
    if run_grant_covers(ctx):
        return granted(rule, segments)
    # Asking (or denying) because the evaluation failed, not because a rule said so, is
    # failing closed; a fallback of `allow` is the admin's choice and is not counted.
    failed = FailClosed.POLICY_ERROR if evaluation.error else None
    if ctx.run.autonomy == Autonomy.AUTONOMOUS:
        fallback = ctx.run.policy_version.autonomous_fallback
        reason = f"autonomous run: require_approval becomes the policy's fallback '{fallback}'"
        if fallback == "allow":
            # SPEC §2: a failure in matching is the fallback in an autonomous run, `allow`
            # included; the reason keeps the failure for the auditor.
            return allow(
                Source.APPROVAL,
                f"{reason} ({evaluation.error})" if evaluation.error else reason,
                rule=rule,
                original_verdict=REQUIRE_APPROVAL,
                segments=segments,
            )
        return deny(
            Source.APPROVAL,
            f"{reason} ({why})",
            rule=rule,
            original_verdict=REQUIRE_APPROVAL,
            segments=segments,
            fail_closed=failed,
        )
    pending = Decision(
        Outcome.PENDING,
        source=Source.APPROVAL,
        reason=f"{AWAITING}{why}",
        rule=rule,
        segments=segments,
        fail_closed=failed,
    )
    return over_the_cap(ctx.run, pending) or pending


AWAITING = "awaiting approval: "
GRANTED = "approved and remembered earlier in this run"


def run_grant_covers(ctx: CallContext) -> bool:
    """Whether Approve & Remember left a grant for exactly this call in its run. Bound to the
    full arguments, not only the call key: the approver saw every argument, so a different
    content at the same path is a different call and asks again. The gate asks again where it
    records an approval, under the run's ledger lock (which a decision holds while it writes
    its grant): a grant committed after the stage looked is seen there."""
    return RunGrant.objects.filter(
        run=ctx.run,
        call_key=ctx.call_key,
        arguments_digest=ctx.arguments_digest,
        tool_definition_digest=ctx.definition_digest,
        policy_version=ctx.run.policy_version_id,
    ).exists()


def granted(rule, segments) -> Decision:
    return allow(Source.APPROVAL, GRANTED, rule=rule, segments=segments)


def over_the_cap(run, pending: Decision) -> Decision | None:
    """The denial of a call that would ask while its run already has the most approvals
    waiting it may have: what the cap stops is a flood, in which the approver would have to
    find the one request that matters. The stage asks first; the gate asks again where it
    records the approval, under the run's ledger lock, so calls asking at the same moment
    cannot pass it together."""
    cap = settings.FLUIDBOX_PENDING_APPROVALS_PER_RUN
    waiting = Approval.objects.filter(run=run, status=ApprovalStatus.PENDING)[:cap].count()
    if waiting < cap:
        return None
    why = pending.reason.removeprefix(AWAITING)
    return deny(
        Source.APPROVAL,
        f"this run already has {cap} approvals waiting for a human, the most it may have "
        f"at once: wait for them to be decided, then ask again with a new tool_call_id "
        f"({why})",
        rule=pending.rule,
        original_verdict=REQUIRE_APPROVAL,
        segments=pending.segments,
    )


def _concern(evaluation) -> str | None:
    """What made a call ASK that no rule asks for: an invisible character, a part of a
    command the engine cannot read exactly."""
    return next(
        (s.reason for s in evaluation.segments if s.verdict is Verdict.ASK and s.reason), None
    )
