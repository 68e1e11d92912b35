"""The gate: stages in the order that is the security model. Each returns None (continue)
or a Decision; none writes. `governance.services.gate` records what comes out."""

from governance.gate.context import CallContext
from governance.gate.decision import Decision
from governance.gate.stages.approval import check_approval
from governance.gate.stages.budget import check_budget
from governance.gate.stages.frozen_set import check_frozen_set
from governance.gate.stages.policy import check_policy
from governance.gate.stages.schema import check_schema
from governance.gate.stages.trust_tier import check_trust_tier
from governance.observability import tracing

STAGES = (
    check_budget,
    check_frozen_set,
    check_schema,
    check_trust_tier,
    check_policy,
    check_approval,
)


def decide(ctx: CallContext) -> Decision:
    for stage in STAGES:
        with tracing.gate_stage(stage) as span:  # a no-op unless tracing is on
            decision = stage(ctx)
            span.decided(decision)
        if decision is not None:
            return decision
    raise AssertionError("the approval stage always decides")
