"""What the gate's shell parser reads in the script an approval asks about: the commands it
finds, each with its verdict. Shown on the approval page and in every notification, so an
approver judges the script by what the shell does with it, whatever its characters look like
(a look-alike of a quote or a `#` reads as one to a person, not to the shell)."""

from dataclasses import dataclass

from governance.models import Approval
from governance.policy.shell_commands import read_best_effort
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
    policy, match_argument = compiled_policy(approval.policy_version), match_argument_of(match)
    segments = policy.evaluate(approval.tool, arguments, match_argument).as_dict()["segments"]
    prefix = f"{approval.tool}:"
    # The first segment of a script of several is the whole script, shown already; so is the
    # one segment of a script too large to read (its subject left empty).
    whole_subjects = (approval.call_key, prefix)
    read = [
        ReadCommand(
            command=segment["subject"].removeprefix(prefix),
            verdict=segment["verdict"],
            reason=segment.get("reason") or "",
        )
        for segment in segments
        if segment["subject"] not in whole_subjects
    ]
    whole = [s for s in segments if s["subject"] in whole_subjects and s.get("reason")]
    if read or not whole:
        return read
    # The parser could not read the script exactly (a `<<-` here-document, `${x:-y}`): say so
    # first, with why, then what the best-effort reading finds in it, each command checked
    # on its own. Without them, one harmless-looking `${done:-ok}` at the end of `echo
    # “a ; curl … | sh ; echo b”` would leave the approver the script's looks alone.
    script = arguments.get(match_argument.name)
    return [
        ReadCommand(WHOLE_SCRIPT, whole[0]["verdict"], f"{whole[0]['reason']}; {BEST_EFFORT}"),
        *_best_effort_commands(policy, approval.tool, arguments, match_argument, script),
    ]


WHOLE_SCRIPT = "(the whole script, as the arguments show it)"
BEST_EFFORT = "the commands below are fluidbox's best-effort reading of it: read the script too"
# Listed in order: every command the policy would not allow alone, and the first of those it
# would; past these, the rest are counted, never dropped unsaid.
MOST_ALLOWED_LISTED = 100
MOST_COMMANDS_READ = 2_000


def _best_effort_commands(policy, tool, arguments, match_argument, script) -> list[ReadCommand]:
    if not isinstance(script, str):
        return []
    reading = read_best_effort(script)
    found = reading.findings
    texts = list(dict.fromkeys(f.text for f in found if f.kind == "command" and f.text != script))
    commands, allowed, left_out = [], 0, max(0, len(texts) - MOST_COMMANDS_READ)
    for text in texts[:MOST_COMMANDS_READ]:
        alone = {**arguments, match_argument.name: text}
        verdict = str(policy.evaluate(tool, alone, match_argument).verdict)
        if verdict == "ALWAYS":
            allowed += 1
            if allowed > MOST_ALLOWED_LISTED:
                left_out += 1
                continue
        commands.append(ReadCommand(text, verdict, "best-effort reading"))
    if left_out:
        more = f"{left_out} more commands of the best-effort reading are not listed here"
        commands.append(ReadCommand("…", "ASK", f"{more}: read the script"))
    if reading.error:
        # Nesting past the reader's depth, more steps than it takes: the part it could not
        # read may hold commands, none listed here (a `curl … | sh` inside 16 `$(`).
        unread = f"{reading.error}: part of the script is not read, its commands not listed"
        commands.append(ReadCommand("…", "ASK", f"{unread}: read the script"))
    return commands
