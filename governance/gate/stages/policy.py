"""Stage 5: the run's frozen policy version decides allow, deny or require_approval."""

from governance.gate.context import CallContext
from governance.gate.decision import CONTINUE, Decision, allow, deny
from governance.models import Source


def rule_json(evaluation) -> dict | None:
    rule = evaluation.rule
    if rule is None:
        return None
    return {"index": rule.number, "pattern": rule.pattern, "action": str(rule.action)}


def segments_json(evaluation) -> list[dict]:
    return [
        {
            "subject": segment.subject,
            "verdict": str(segment.verdict),
            "rule_index": segment.rule_number,
        }
        for segment in evaluation.segments
    ]


def check_policy(ctx: CallContext) -> Decision | None:
    evaluation = ctx.evaluation
    verdict = str(evaluation.verdict)
    rule = rule_json(evaluation)
    if verdict == "NEVER":
        return deny(
            Source.POLICY,
            _reason(evaluation, "policy denies this call"),
            rule=rule,
            segments=segments_json(evaluation),
        )
    if verdict == "ALWAYS":
        return allow(
            Source.POLICY,
            _reason(evaluation, "policy allows this call"),
            rule=rule,
            segments=segments_json(evaluation),
        )
    return CONTINUE


def _reason(evaluation, text: str) -> str:
    if evaluation.rule is None:
        return text
    return f"{text} (rule {evaluation.rule.number}: {evaluation.rule.pattern!r})"
