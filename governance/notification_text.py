"""What a person reads in a notification: Slack mrkdwn and a plain-text email.

The agent writes the arguments. Here they can neither ping anyone (`<!channel>`), nor carry a
link (`<http://evil|https://fluidbox/…>`), nor leave the code block they are shown in (a
``` of their own), nor push the rest of a line out of sight (a long run of spaces): `&`, `<`
and `>` are escaped as Slack asks, every backtick in them is written `\\u0060`, hidden and
look-alike characters and long runs of spaces are `\\u…` escapes. The genuine approval link
comes first, apart from anything the agent wrote.
"""

import json

from governance.json_layout import json_layout
from governance.policy.invisible import LONG_SPACE_RUN, escape_char, flagged

SLACK_SECTION_LIMIT = 2900  # Slack refuses a section text over 3,000 characters
SLACK_MAX_CHUNKS = 40  # of Slack's 50 blocks per message
AGENT_WROTE = (
    "Below: written by the agent, shown verbatim as JSON (hidden, look-alike and repeated-space "
    "characters and backticks as \\u escapes). Nothing below is from fluidbox."
)


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


def summary_words(arguments) -> str:
    keys = len(arguments) if isinstance(arguments, dict) else 0
    size = len(json.dumps(arguments, ensure_ascii=False, sort_keys=True).encode())
    return f"{keys} top-level key{'s' if keys != 1 else ''}, {size} bytes"


def slack_message(
    *,
    link: str,
    approval_id,
    agent: str,
    tool: str,
    run: str,
    trust_tier: str,
    expires: str,
    arguments,
) -> tuple[str, list[dict]]:
    """The `text` and `blocks` of a Slack-compatible message."""
    head = f"<{link}|Open approval #{approval_id} in fluidbox> to approve or deny it."
    facts = (
        f"*Approval needed:* agent {_slack_code(agent)} wants to call {_slack_code(tool)} "
        f"(run {slack_escape(run)}, trust tier {slack_escape(trust_tier)}, expires "
        f"{slack_escape(expires)})."
    )
    body = visible_json(arguments)
    intro = f"Tool: {_slack_code(tool)}\nArguments ({summary_words(arguments)}):"
    code = f"```\n{slack_escape(body)}\n```"
    text = f"{head}\n{facts}\n\n———— {AGENT_WROTE} ————\n{intro}\n{code}"
    blocks: list[dict] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"{head}\n{facts}"}},
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": f"Open approval #{approval_id}"},
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
    return text, blocks


def email_text(
    *, link: str, agent: str, tool: str, run: str, trust_tier: str, expires: str, arguments
) -> str:
    """The plain-text email: the genuine link first, then what the agent wrote, fenced."""
    return (
        f"Decide: {link}\n\n"
        f"Approval needed: agent {one_line(agent)} wants to call {one_line(tool)} "
        f"(run {run}, trust tier {trust_tier}, expires {expires}).\n\n"
        f"----- {AGENT_WROTE} -----\n"
        f"Tool: {one_line(tool)}\n"
        f"Arguments ({summary_words(arguments)}):\n"
        f"{visible_json(arguments)}\n"
        f"----- End of what the agent wrote. Decide only through the link at the top. -----\n"
    )
