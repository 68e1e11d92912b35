"""What-if replay: which recorded calls a draft policy would decide differently."""

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

from fluidbox.canonical import canonical_json
from governance.policy.compiled import CompiledPolicy
from governance.policy.subjects import MatchArgument, SubjectError, call_key
from governance.policy.verdicts import Verdict


@dataclass(frozen=True)
class RecordedCall:
    tool: str
    arguments: Any
    match_argument: MatchArgument | None = None
    id: Hashable = None


@dataclass(frozen=True)
class Change:
    id: Hashable
    call_key: str
    old_verdict: Verdict
    new_verdict: Verdict


def replay(old: CompiledPolicy, new: CompiledPolicy, calls: Iterable[RecordedCall]) -> list[Change]:
    """Every call whose verdict differs between `old` and `new`, in the order given."""
    changes = []
    for call in calls:
        before = old.evaluate(call.tool, call.arguments, call.match_argument).verdict
        after = new.evaluate(call.tool, call.arguments, call.match_argument).verdict
        if before is after:
            continue
        try:
            key = call_key(call.tool, call.arguments, call.match_argument)
        except SubjectError:
            key = f"{call.tool}:{canonical_json(call.arguments)}"
        changes.append(Change(call.id, key, before, after))
    return changes
