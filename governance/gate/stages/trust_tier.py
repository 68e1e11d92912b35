"""Stage 4: a read_only run never writes or reaches for secrets. No approval escape."""

from governance.gate.context import CallContext
from governance.gate.decision import CONTINUE, Decision, deny
from governance.models import Access, Source, TrustTier


def check_trust_tier(ctx: CallContext) -> Decision | None:
    if ctx.run.trust_tier != TrustTier.READ_ONLY:
        return CONTINUE
    tool = ctx.frozen_tool
    if tool.access == Access.WRITE:
        return deny(Source.TRUST_TIER, f"read-only run: {tool.name!r} is a write tool")
    if tool.secrets:
        return deny(Source.TRUST_TIER, f"read-only run: {tool.name!r} uses secrets")
    return CONTINUE
