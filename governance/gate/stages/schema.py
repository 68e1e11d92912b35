"""Stage 3: arguments validated against the schema the run froze."""

from governance.gate.context import CallContext
from governance.gate.decision import CONTINUE, Decision, FailClosed, deny
from governance.models import Source
from governance.schemas import argument_problem


def check_schema(ctx: CallContext) -> Decision | None:
    tool = ctx.frozen_tool
    if not tool.callable:
        return deny(Source.SCHEMA, f"tool {tool.name!r} is un-callable: {tool.guard_error}")
    if not isinstance(ctx.arguments, dict):
        return deny(Source.SCHEMA, "arguments must be a JSON object")
    problem = argument_problem(tool.schema, ctx.arguments)
    if problem is not None:
        return deny(
            Source.SCHEMA,
            f"arguments do not match the tool's schema: {problem.text}",
            fail_closed=FailClosed.SCHEMA_VALIDATOR if problem.validator_failed else None,
        )
    return CONTINUE
