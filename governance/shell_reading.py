"""What the gate's shell parser reads in the script an approval asks about: the commands it
finds, each with its verdict. Shown on the approval page and in every notification, so an
approver judges the script by what the shell does with it, whatever its characters look like
(a look-alike of a quote or a `#` reads as one to a person, not to the shell)."""

from dataclasses import dataclass

from governance.models import Approval
from governance.policy_store import compiled_policy, match_argument_of


@dataclass(frozen=True)
class ReadCommand:
    command: str  # the agent's text, as the parser cut it out of the script
    verdict: str
    reason: str


def approval_shell_reading(approval: Approval, match: dict | None = None) -> list[ReadCommand]:
    """The commands of the approval's script, in order; empty unless its tool takes a shell
    script. `match` is the frozen tool's `match_argument` when the caller has read it."""
    if match is None:
        tool = approval.run.frozen_tools.filter(name=approval.tool).first()
        match = (tool.match_argument if tool else None) or {}
    arguments = approval.call.arguments
    if match.get("kind") != "shell" or not isinstance(arguments, dict):
        return []
    evaluation = compiled_policy(approval.policy_version).evaluate(
        approval.tool, arguments, match_argument_of(match)
    )
    prefix = f"{approval.tool}:"
    return [
        ReadCommand(
            command=segment["subject"].removeprefix(prefix),
            verdict=segment["verdict"],
            reason=segment.get("reason") or "",
        )
        # The first segment of a script of several is the whole script, shown already.
        for segment in evaluation.as_dict()["segments"]
        if segment["subject"] != approval.call_key
    ]
