"""The words for what each Approve & Remember choice covers, from the tool's match argument.

The run grant is always the exact call (every argument, by digest). A policy rule sees only
`tool:match_string`, so for a tool with a match argument it covers more than the approver saw:
the page names what it ignores before anyone can choose it.
"""

from dataclasses import dataclass

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from governance.errors import Invalid
from governance.models import Approval, FrozenTool
from governance.policy import escape_pattern
from governance.portal.verbatim import highlighted
from governance.services.policies import exact_rule_pattern


@dataclass(frozen=True)
class RememberScopes:
    run: str  # what "remember for this run" grants
    rule: str  # the pattern "remember in the policy" adds
    rule_sees: str  # what that rule compares
    ignores: str  # what it then allows beyond this call, in words ("" when nothing)
    not_compared: str  # the arguments it does not compare (HTML: the agent named them)
    wider: bool  # whether the rule covers calls this approval did not show
    rule_refused: str = ""  # why no rule can be added for this call ("" when one can)


def _names(names: list[str]) -> SafeString:
    """The agent wrote these names: each is code coloured as an argument key, its hidden
    characters marked, so none passes for the page's own words (`x”, and nothing else: …`)."""
    shown = [
        format_html(
            '<code class="fb-remember-arg">“{}”</code>', highlighted(n, layout_is_visible=False)
        )
        for n in names
    ]
    return mark_safe(", ".join(shown[:-1]) + (" and " if len(shown) > 1 else "") + shown[-1])


def remember_scopes(approval: Approval, tool: FrozenTool | None) -> RememberScopes:
    arguments = approval.call.arguments if isinstance(approval.call.arguments, dict) else {}
    run = (
        f"only a {approval.tool} call with exactly these arguments (all {len(arguments)} of "
        f"them, digest {approval.call.arguments_digest[:16]}…), for the rest of this run; any "
        "other value of any argument asks again, and so does every call in a new run"
    )
    rule = escape_pattern(approval.call_key)
    try:
        exact_rule_pattern(approval.call_key, approval.call.arguments)
        refused = ""
    except Invalid as error:
        refused = error.detail
    match = (tool.match_argument if tool else None) or None
    if not match:
        return RememberScopes(
            run=run,
            rule=rule,
            rule_sees="the whole arguments",
            ignores="",
            not_compared="",
            wider=False,
            rule_refused=refused,
        )
    name, kind = match["name"], match.get("kind") or "text"
    others = sorted(k for k in arguments if k != name)
    if kind == "path" and tool is not None and tool.access == "write":
        ignores = "any content written to this path"
    elif kind == "path":
        ignores = "any other arguments on this path"
    elif kind == "shell":
        ignores = "this exact script whatever the call's other arguments"
    else:
        ignores = f"this “{name}” whatever the call's other arguments"
    if others:
        not_compared = format_html("{}, and any argument a future call adds", _names(others))
    else:
        not_compared = "any argument a future call adds"
    return RememberScopes(
        run=run,
        rule=rule,
        rule_sees=f"only “{name}” ({kind})",
        ignores=ignores,
        not_compared=not_compared,
        wider=True,
        rule_refused=refused,
    )
