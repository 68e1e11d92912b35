"""What a gate stage may answer: nothing (continue) or a Decision."""

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from governance.models import Source
from ledger.redaction import redact_text


class Outcome(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    PENDING = "pending"


class FailClosed(StrEnum):
    """Why an error, not a rule, made a call ASK or deny (`fluidbox_gate_fail_closed_total`,
    and `fail_closed` in its tool.decision)."""

    POLICY_ERROR = "policy_error"
    SCHEMA_VALIDATOR = "schema_validator"
    VAULT_SEALED = "vault_sealed"
    VAULT_ERROR = "vault_error"


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    source: Source | None = None
    reason: str = ""
    rule: dict | None = None
    # Autonomous runs rewrite require_approval to the fallback; both verdicts are recorded.
    original_verdict: str | None = None
    segments: list = field(default_factory=list)
    fail_closed: FailClosed | None = None

    @property
    def tool_error(self) -> str | None:
        if self.outcome != Outcome.DENY:
            return None
        return f"Permission denied by fluidbox ({self.source}): {self.reason}"

    def redacted(self, arguments: Any) -> "Decision":
        """The decision as it is stored and answered. Its reason and its rule's pattern can
        quote the call (an exact remembered rule is the call itself; a parse error quotes the
        command), so both pass the redactor: a value under `api_key`, `password`, … never
        reaches a stored reason. The segments go to the ledger only, through `redact`."""
        reason = redact_text(self.reason, arguments=arguments)
        rule = self.rule
        if rule is not None and isinstance(rule.get("pattern"), str):
            pattern = redact_text(rule["pattern"], arguments=arguments, inline=False)
            if pattern != rule["pattern"]:
                rule = {**rule, "pattern": pattern}
        if reason == self.reason and rule is self.rule:
            return self
        return replace(self, reason=reason, rule=rule)


def deny(source: Source, reason: str, *, rule: dict | None = None, **extra) -> Decision:
    return Decision(Outcome.DENY, source=source, reason=reason, rule=rule, **extra)


def allow(source: Source | None, reason: str, *, rule: dict | None = None, **extra) -> Decision:
    return Decision(Outcome.ALLOW, source=source, reason=reason, rule=rule, **extra)


CONTINUE = None
