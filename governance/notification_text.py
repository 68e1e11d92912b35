"""What a person reads in a notification: Slack mrkdwn and a plain-text email.

The agent writes the arguments. Here they can neither ping anyone (`<!channel>`), nor carry a
link (`<http://evil|https://fluidbox/…>`), nor leave the code block they are shown in (a
``` of their own), nor push the rest of a line out of sight (a long run of spaces): `&`, `<`
and `>` are escaped as Slack asks, every backtick in them is written `\\u0060`, hidden and
look-alike characters and long runs of spaces are `\\u…` escapes. The genuine approval link
comes first, apart from anything the agent wrote.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from governance.json_layout import json_layout
from governance.policy.invisible import LONG_SPACE_RUN, escape_char, flagged
from governance.shell_reading import ReadCommand

SLACK_SECTION_LIMIT = 2900  # Slack refuses a section text over 3,000 characters
SLACK_MAX_CHUNKS = 36  # of Slack's 50 blocks per message (the shell's reading takes up to 4)
SLACK_MAX_READING_SECTIONS = 2
AGENT_WROTE = (
    "Below: written by the agent, shown verbatim as JSON (hidden, look-alike and repeated-space "
    "characters and backticks as \\u escapes). Nothing below is from fluidbox."
)


@dataclass(frozen=True)
class ApprovalFacts:
    """What a notification says of one approval (the agent's words raw: escaped here)."""

    link: str
    approval_id: int
    agent: str
    tool: str
    run: str
    trust_tier: str
    expires: str
    arguments: Any
    shell_reading: Sequence[ReadCommand] = ()


def _visible_literal(literal: str) -> str:
    """A JSON string literal with flagged characters, backticks and long space runs escaped
    (all as JSON escapes, so the text still reads as the same JSON)."""
    positions = flagged(literal, layout_is_visible=False)
    out = []
    index = 0
    while index < len(literal):
        char = literal[index]
        if char == " ":
            end = index
            while end < len(literal) and literal[end] == " ":
                end += 1
            run = end - index
            out.append("\\u0020" * run if run >= LONG_SPACE_RUN else " " * run)
            index = end
            continue
        if index in positions:
            out.append(escape_char(char))
        elif char == "`":
            out.append("\\u0060")
        else:
            out.append(char)
        index += 1
    return "".join(out)


def visible_json(value) -> str:
    """`value` as indented JSON (sorted keys, like the approval page) with every string made
    visible by `_visible_literal`; the layout's own spaces and newlines are left alone."""
    return json_layout(value, key=_visible_literal, string=_visible_literal, scalar=str)


def one_line(text: str) -> str:
    """A short agent- or operator-written value for a single line (a name, a tool)."""
    return _visible_literal(text)


def quoted(text: str) -> str:
    """A name the run's side chose (the agent's, the tool's) among fluidbox's own words in
    plain text (the e-mail): one JSON string literal, a quote or backslash in it escaped,
    hidden characters as `one_line` writes them. Unquoted, an agent named
    `nightly → read_file (already approved …)` finished fluidbox's sentence; quoted, the
    reader sees where the name ends (Slack shows it as inline code)."""
    return _visible_literal(json.dumps(text, ensure_ascii=False))


def slack_escape(text: str) -> str:
    """Slack's three control characters, as Slack's formatting reference asks."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_code(text: str) -> str:
    return f"`{slack_escape(one_line(text))}`"


def _chunks(text: str, limit: int) -> list[str]:
    """`text` in pieces whose Slack-escaped form fits `limit`, cut at line ends if possible."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        for char in line:
            width = len(slack_escape(char))
            if size + width > limit:
                chunks.append("".join(current))
                current, size = [], 0
            current.append(char)
            size += width
        if size > limit * 3 // 4:
            chunks.append("".join(current))
            current, size = [], 0
    if current:
        chunks.append("".join(current))
    return chunks


SHELL_READS = (
    "The shell reads (fluidbox's parser finds these commands in the script and checks each "
    "on its own; each verdict and reason is fluidbox's, each command the agent's text, "
    "escaped as above):"
)


# A command and its reason cut to this many characters in Slack, counted as Slack shows them
# (each hidden character a `\u200b` or `\U000e0041` escape, each `&` an `&amp;`): the two fit
# one section whatever characters the agent chose. Counted in the raw text, 200 tag
# characters (U+E0041, ten characters escaped) in a command and in a reason quoting it made
# a section of 3,928 characters, which Slack refuses: the whole notification was never sent.
SLACK_READING_LIMIT = 1200


def _slack_width(text: str) -> int:
    return len(slack_escape(one_line(text)))


def _reading_lines(
    reading: Sequence[ReadCommand],
    command,
    limit: int | None = None,
    reason=one_line,
    width=len,
) -> list[str]:
    """Two lines a command: fluidbox's verdict and reason, then the agent's command alone on
    its own line (`one_line` escapes any line break in it, so it can forge no verdict). A
    command or reason over `limit` characters (as `width` counts them: as shown) is cut, and
    the cut is said. A reason may quote the agent (`timeout: unrecognised option
    '--x=https://…'`): `reason` writes it (in Slack, as inline code, where no URL becomes a
    link and no `@channel` a mention)."""

    def cut(text: str) -> tuple[str, str]:
        if limit is None or width(text) <= limit:
            return text, ""
        # The longest start of the text that is shown within `limit` (found by halving).
        low, high = 0, min(len(text), limit)
        while low < high:
            middle = (low + high + 1) // 2
            if width(text[:middle]) <= limit:
                low = middle
            else:
                high = middle - 1
        return text[:low], f" ... and {len(text) - low} more characters"

    lines = []
    for number, read in enumerate(reading, 1):
        said, said_cut = cut(read.reason)
        lines.append(f"{number}. {read.verdict}" + (f" - {reason(said)}{said_cut}" if said else ""))
        text, text_cut = cut(read.command)
        lines.append(f"    {command(text)}{text_cut}")
    return lines


def summary_words(arguments) -> str:
    keys = len(arguments) if isinstance(arguments, dict) else 0
    size = len(json.dumps(arguments, ensure_ascii=False, sort_keys=True).encode())
    return f"{keys} top-level key{'s' if keys != 1 else ''}, {size} bytes"


def slack_message(facts: ApprovalFacts) -> tuple[str, list[dict]]:
    """The `text` and `blocks` of a Slack-compatible message."""
    link, arguments, tool = facts.link, facts.arguments, _slack_code(facts.tool)
    head = f"<{link}|Open approval #{facts.approval_id} in fluidbox> to approve or deny it."
    needed = (
        f"*Approval needed:* agent {_slack_code(facts.agent)} wants to call {tool} "
        f"(run {slack_escape(facts.run)}, trust tier {slack_escape(facts.trust_tier)}, "
        f"expires {slack_escape(facts.expires)})."
    )
    body = visible_json(arguments)
    intro = f"Tool: {tool}\nArguments ({summary_words(arguments)}):"
    code = f"```\n{slack_escape(body)}\n```"
    text = f"{head}\n{needed}\n\n———— {AGENT_WROTE} ————\n{intro}\n{code}"
    reading = [
        slack_escape(line)
        for line in _reading_lines(
            facts.shell_reading,
            _plain_code,
            SLACK_READING_LIMIT,
            reason=_plain_code,
            width=_slack_width,
        )
    ]
    sections, rest = _reading_sections(reading)
    if sections:
        more = [f"{_more_commands(rest)} on the approval page."] if rest else []
        text += "\n\n" + "\n".join([f"*{slack_escape(SHELL_READS)}*", *sections, *more])
    blocks: list[dict] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"{head}\n{needed}"}},
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": f"Open approval #{facts.approval_id}"},
                    "url": link,
                }
            ],
        },
        {"type": "divider"},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": slack_escape(AGENT_WROTE)}]},
        {"type": "section", "text": {"type": "mrkdwn", "text": intro}},
    ]
    chunks = _chunks(body, SLACK_SECTION_LIMIT - 10)
    for chunk in chunks[:SLACK_MAX_CHUNKS]:
        section = f"```\n{slack_escape(chunk)}\n```"
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": section}})
    if len(chunks) > SLACK_MAX_CHUNKS:
        rest = sum(len(c) for c in chunks[SLACK_MAX_CHUNKS:])
        blocks.append(
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": f"The arguments go on for {rest} more characters: "
                        f"<{link}|read them all on the approval page>.",
                    }
                ],
            }
        )
    if sections:
        blocks += _reading_blocks(sections, rest, link)
    return text, blocks


def _plain_code(command: str) -> str:
    return f"`{one_line(command)}`"


def _more_commands(count: int) -> str:
    return f"{count} more command{'s' if count != 1 else ''}"


def _reading_sections(lines: list[str]) -> tuple[list[str], int]:
    """The reading's lines in Slack sections (a command's two lines kept together, each
    section within Slack's limit, at most `SLACK_MAX_READING_SECTIONS`), and how many
    commands did not fit."""
    sections: list[str] = []
    current = ""
    shown = 0
    for index in range(0, len(lines), 2):
        pair = "\n".join(lines[index : index + 2])
        if current and len(current) + 1 + len(pair) > SLACK_SECTION_LIMIT:
            if len(sections) + 1 == SLACK_MAX_READING_SECTIONS:
                break
            sections.append(current)
            current = ""
        current = f"{current}\n{pair}" if current else pair
        shown += 1
    if current:
        sections.append(current)
    return sections, len(lines) // 2 - shown


def _reading_blocks(sections: list[str], rest: int, link: str) -> list[dict]:
    blocks: list[dict] = [
        {"type": "divider"},
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{slack_escape(SHELL_READS)}*"}},
    ]
    blocks += [{"type": "section", "text": {"type": "mrkdwn", "text": s}} for s in sections]
    if rest:
        blocks.append(
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": f"{_more_commands(rest)}: "
                        f"<{link}|read them all on the approval page>.",
                    }
                ],
            }
        )
    return blocks


def email_text(facts: ApprovalFacts) -> str:
    """The plain-text email: the genuine link first, then what the agent wrote, fenced, then
    the commands the shell reads in it (for a shell script)."""
    reading = _reading_lines(facts.shell_reading, one_line)
    reading_text = "\n".join(["", SHELL_READS, *reading, ""]) if reading else ""
    tool = one_line(facts.tool)
    return (
        f"Decide: {facts.link}\n\n"
        f"Approval needed: agent {quoted(facts.agent)} wants to call {quoted(facts.tool)} "
        f"(run {facts.run}, trust tier {facts.trust_tier}, expires {facts.expires}).\n\n"
        f"----- {AGENT_WROTE} -----\n"
        f"Tool: {tool}\n"
        f"Arguments ({summary_words(facts.arguments)}):\n"
        f"{visible_json(facts.arguments)}\n"
        f"----- End of what the agent wrote. Decide only through the link at the top. -----\n"
        f"{reading_text}"
    )
