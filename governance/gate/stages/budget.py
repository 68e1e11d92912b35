"""Stage 1: a run that has spent (or booked) its allowance stops before anything else."""

from governance.gate.context import CallContext
from governance.gate.decision import CONTINUE, Decision, deny
from governance.models import Source


def check_budget(ctx: CallContext) -> Decision | None:
    budget = ctx.budget
    if budget.spent + budget.outstanding >= budget.allowance:
        return deny(
            Source.BUDGET,
            f"token budget exhausted: {budget.spent} spent and {budget.outstanding} reserved "
            f"of {budget.allowance}",
        )
    return CONTINUE
