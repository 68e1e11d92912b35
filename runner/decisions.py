"""What the gate and the budget endpoints answer, as frozen values (SPEC §5, §8)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from runner.errors import GateProtocolError

DecisionValue = Literal["allow", "deny", "pending"]
_DECISIONS = ("allow", "deny", "pending")


@dataclass(frozen=True)
class GateDecision:
    """The gate's answer for one tool call; a brokered call also carries its governed result."""

    decision: DecisionValue
    tool: str
    source: str | None = None
    reason: str | None = None
    rule: dict[str, Any] | None = None
    approval: dict[str, Any] | None = None
    tool_error: str | None = None
    result: dict[str, Any] | None = None
    replayed: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_response(cls, tool: str, body: Any) -> GateDecision:
        if not isinstance(body, dict) or body.get("decision") not in _DECISIONS:
            raise GateProtocolError(f"the gate answered without a known decision: {body!r:.300}")
        rule = body.get("rule")
        approval = body.get("approval")
        result = body.get("result")
        return cls(
            decision=body["decision"],
            tool=tool,
            source=_optional_text(body.get("source")),
            reason=_optional_text(body.get("reason")),
            rule=rule if isinstance(rule, dict) else None,
            approval=approval if isinstance(approval, dict) else None,
            tool_error=_optional_text(body.get("tool_error")),
            result=result if isinstance(result, dict) else None,
            replayed=body.get("replayed") is True,
            raw=body,
        )

    @property
    def allowed(self) -> bool:
        return self.decision == "allow"

    @property
    def pending(self) -> bool:
        return self.decision == "pending"

    @property
    def rule_action(self) -> str | None:
        return str(self.rule.get("action")) if self.rule and self.rule.get("action") else None

    def as_tool_error(self) -> str:
        """Text for the model: why the call did not run, so it can correct itself or move on."""
        if self.allowed:
            raise ValueError("an allowed call is not a tool error")
        if self.pending:
            approval_id = (self.approval or {}).get("id", "unknown")
            return (
                f"The call to {self.tool} is still waiting for a human approval "
                f"(approval {approval_id}); it has not run. Try again later or continue "
                "without it."
            )
        if self.tool_error:
            return self.tool_error
        parts = [f"The permission gate denied the call to {self.tool}"]
        if self.source:
            parts.append(f" (source: {self.source})")
        parts.append(f": {self.reason}" if self.reason else ".")
        if self.rule and self.rule.get("pattern"):
            parts.append(f" Matching rule: {self.rule['pattern']} -> {self.rule.get('action')}.")
        parts.append(" The call was not run.")
        return "".join(parts)


@dataclass(frozen=True)
class Reservation:
    """A granted budget booking (201, or 200 for a retry with the same request key)."""

    id: str
    reserved_tokens: int
    remaining_tokens: int | None
    request_key: str


@dataclass(frozen=True)
class BudgetExhausted:
    """A refused booking (409 budget_exhausted): the model call must not be made."""

    remaining_tokens: int | None
    request_key: str

    def as_tool_error(self) -> str:
        return (
            "The run's token budget is exhausted "
            f"({self.remaining_tokens if self.remaining_tokens is not None else 'no'} tokens "
            "left); no further model call can be made."
        )


def _optional_text(value: Any) -> str | None:
    return None if value is None else str(value)
