"""The approvals inbox and one approval's page (the target of notification links).

Deciding goes through `approval_decide`, which enforces the owner rule itself: the buttons
this page hides are refused on the server too.
"""

import json

from django.contrib import messages
from django.db.models import Q, QuerySet
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from governance.admin.roles import READ_ROLES, portal_actor
from governance.authentication import Actor
from governance.dashboard import runs_visible_to
from governance.errors import NotFound, ServiceError
from governance.models import Approval, ApprovalStatus, RememberScope, Role
from governance.policy import escape_invisible
from governance.policy.invisible import flagged
from governance.portal.pages import page_context
from governance.portal.remember import remember_scopes
from governance.portal.verbatim import (
    arguments_html,
    arguments_preview,
    arguments_summary,
    arguments_text,
    has_invisible,
    highlighted,
)
from governance.schemas import json_scalars
from governance.selectors import (
    access_approval,
    bindings_owned_by,
    may_decide,
    may_remember_in_policy,
    pending_approvals_for,
)
from governance.services.approvals import approval_decide
from governance.shell_reading import approval_shell_reading

DECISIONS = {
    "approve": (True, RememberScope.NONE),
    "deny": (False, RememberScope.NONE),
    "remember": (True, RememberScope.RUN),
    "remember_policy": (True, RememberScope.POLICY),
}
RECENT = 15
# About this many lines of arguments fit the box before it scrolls (portal.css: 32em), and
# at least this many characters fit on one of its lines before a long one wraps (a narrow
# window; a wider one holds more, so a box said to scroll may not, never the reverse).
BOX_LINES = 28
BOX_COLUMNS = 50


def visible_approvals(actor: Actor) -> QuerySet[Approval]:
    """Approvals of runs the actor may read, and those on the actor's personal connections."""
    mine = Q(connection__owner=actor.user, run__org_id__in=list(actor.roles))
    return Approval.objects.filter(runs_visible_to(actor) | mine).select_related(
        "run", "connection__owner", "policy_version__policy", "call", "decided_by"
    )


def may_view(approval: Approval, actor: Actor) -> bool:
    if may_decide(approval, actor) or actor.role_in(approval.run.org_id) in READ_ROLES:
        return True
    user_id = actor.user.pk
    owner_id = approval.connection.owner_id if approval.connection_id else None
    return user_id in (approval.run.invoked_by_id, owner_id)


def why_not_decidable(approval: Approval, actor: Actor) -> str:
    connection = approval.connection
    if connection is not None and connection.is_personal:
        owner = (
            escape_invisible(connection.owner.get_username(), layout_is_visible=False)
            if connection.owner_id
            else "its owner"
        )
        return (
            f"Only {owner}, who owns the personal connection “{connection.slug}” and invoked "
            "this run, can decide this call. No admin or superuser may decide it for them."
        )
    role = actor.role_in(approval.run.org_id) or "no role"
    return f"Your role here ({role}) does not decide approvals; admins and approvers do."


def settled_by(approval: Approval) -> str:
    """Who or what settled it: a person, the timeout, or the run finishing first."""
    if approval.decided_by_id:
        return approval.decided_by.get_username()
    if approval.status == ApprovalStatus.TIMED_OUT:
        return "timeout"
    return "run finished"  # approvals_close_for_run: the only other way without a person


def approval_card(approval: Approval, actor: Actor, now, *, full: bool = True) -> dict:
    """Everything the page shows about one approval: the facts fluidbox vouches for (tool,
    match argument, matched rule, how much the agent wrote) apart from what the agent wrote,
    and the scopes Approve & Remember would grant. `full=False` for list rows (a preview)."""
    run = approval.run
    policy = approval.policy_version.policy
    call_arguments = approval.call.arguments
    decidable = approval.status == ApprovalStatus.PENDING and may_decide(approval, actor)
    card = {
        "approval": approval,
        "run": run,
        "tool": highlighted(approval.tool, layout_is_visible=False),
        "arguments_preview": highlighted(arguments_preview(call_arguments)),
        "expired": approval.expires_at <= now,
        "seconds_left": max(0, int((approval.expires_at - now).total_seconds())),
        "may_decide": decidable and approval.expires_at > now,
        "why_not": "" if decidable else why_not_decidable(approval, actor),
        "policy": policy,
    }
    if not full:
        return card
    arguments = arguments_text(call_arguments)
    tool = run.frozen_tools.filter(name=approval.tool).first()
    match = (tool.match_argument if tool else None) or {}
    match_value = (
        call_arguments.get(match["name"]) if match and isinstance(call_arguments, dict) else None
    )
    if match_value is not None and not isinstance(match_value, str):
        match_value = json.dumps(match_value, ensure_ascii=False, sort_keys=True)
    summary = arguments_summary(call_arguments, columns=BOX_COLUMNS)
    card.update(
        {
            "access": tool.access if tool else "",
            "arguments": arguments_html(call_arguments),
            "summary": summary,
            "scrolls": summary["rows"] > BOX_LINES,
            "match_name": match.get("name", ""),
            "match_kind": match.get("kind") or ("text" if match else ""),
            "match_value": highlighted(match_value, layout_is_visible=False)
            if match_value is not None
            else None,
            "call_key": highlighted(approval.call_key, layout_is_visible=False),
            "matched_rule": highlighted(approval.rule["pattern"], layout_is_visible=False)
            if isinstance(approval.rule, dict) and isinstance(approval.rule.get("pattern"), str)
            else "",
            "has_invisible": has_invisible(arguments) or has_invisible(approval.call_key),
            "scopes": remember_scopes(approval, tool),
            "may_remember_in_policy": may_remember_in_policy(approval, actor),
            "policy_current_number": policy.current_version.number
            if policy.current_version_id
            else None,
        }
    )
    card["remembered_rule"] = highlighted(card["scopes"].rule, layout_is_visible=False)
    card["shell_reading"] = [
        {
            "command": highlighted(read.command, layout_is_visible=False),
            "verdict": read.verdict,
            # A reason quotes the agent's words (`bash --x… changes what the shell reads`).
            "reason": highlighted(read.reason, layout_is_visible=False),
        }
        for read in approval_shell_reading(approval, match)
    ]
    return card


@require_GET
def inbox_view(request):
    actor = portal_actor(request)
    now = timezone.now()
    decidable = list(
        pending_approvals_for(actor).select_related(
            "connection__owner", "policy_version__policy__current_version", "call"
        )
    )
    decidable_ids = {a.pk for a in decidable}
    visible = visible_approvals(actor)
    others = [
        a
        for a in visible.filter(status=ApprovalStatus.PENDING).order_by("expires_at")[:200]
        if a.pk not in decidable_ids
    ]
    recent = list(visible.exclude(status=ApprovalStatus.PENDING).order_by("-decided_at")[:RECENT])
    for approval in recent:
        approval.settled_by = settled_by(approval)
    cards, large = [], []
    for approval in decidable:
        card = (
            approval_card(approval, actor, now) if _fits_a_card(approval.call.arguments) else None
        )
        if card is None or _reading_size(card) > INBOX_CARD_READING_CHARACTERS:
            large.append(approval)
        else:
            cards.append(card)
    context = page_context(
        request,
        "Approvals inbox",
        waiting=len(decidable),
        cards=cards,
        large=[
            {**approval_card(a, actor, now, full=False), "bytes": _size(a.call.arguments)}
            for a in large
        ],
        others=[approval_card(a, actor, now, full=False) for a in others],
        recent=recent,
        is_deciding=any(r in (Role.ADMIN, Role.APPROVER) for r in actor.roles.values()),
        bindings_waiting=bindings_owned_by(actor).filter(consent="pending").count(),
    )
    return render(request, "portal/inbox.html", context)


# A call the inbox shows in full, with its buttons: within these, a card's page stays a few
# hundred KB whatever the agent wrote (each hidden character is a marked escape of ~70 bytes);
# a larger one is a row with its size and a link to its own page, where it is read and decided.
INBOX_CARD_CHARACTERS = 8_000
INBOX_CARD_FLAGGED = 200
# What the shell reading may add to a card: each level of a nested `$( … )` is a row holding
# the whole inner text again, so 7,000 characters nested 15 deep made a 700 KB card.
INBOX_CARD_READING_CHARACTERS = 40_000


def _reading_size(card: dict) -> int:
    return sum(len(row["command"]) + len(row["reason"]) for row in card["shell_reading"])


def _size(arguments) -> int:
    return len(json.dumps(arguments, ensure_ascii=False, sort_keys=True).encode())


def _fits_a_card(arguments) -> bool:
    if len(json.dumps(arguments, ensure_ascii=False, sort_keys=True)) > INBOX_CARD_CHARACTERS:
        return False
    # Counted in the strings as the card shows them (JSON writes a control character as a
    # plain `\u0001`, which nothing would flag).
    hidden = 0
    for item in json_scalars(arguments):
        if isinstance(item, str):
            hidden += len(flagged(item, layout_is_visible=False))
            if hidden > INBOX_CARD_FLAGGED:
                return False
    return True


def _visible_approval(request, approval_id) -> Approval:
    actor = portal_actor(request)
    try:
        approval = access_approval(approval_id, actor)
    except NotFound:
        raise Http404("no such approval") from None
    approval = visible_approvals(actor).filter(pk=approval.pk).first()
    if approval is None or not may_view(approval, actor):
        raise Http404("no such approval")
    return approval


def _approval_page(request, approval: Approval, *, status: int = 200):
    actor = portal_actor(request)
    approval = (
        visible_approvals(actor)
        .select_related("policy_version__policy__current_version")
        .get(pk=approval.pk)
    )
    context = page_context(
        request,
        f"Approval {approval.pk}",
        card=approval_card(approval, actor, timezone.now()),
    )
    return render(request, "portal/approval.html", context, status=status)


@require_GET
def approval_view(request, approval_id: int):
    return _approval_page(request, _visible_approval(request, approval_id))


def _next_url(request, approval_id: int) -> str:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return reverse("admin:inbox-approval", args=[approval_id])


@require_POST
def decide_view(request, approval_id: int):
    approval = _visible_approval(request, approval_id)
    choice = request.POST.get("decision", "")
    if choice not in DECISIONS:
        messages.error(request, "Choose approve, deny or approve & remember.")
        return _approval_page(request, approval, status=400)
    approve, remember = DECISIONS[choice]
    if remember == RememberScope.POLICY and request.POST.get("accept_wider_scope") != "yes":
        tool = approval.run.frozen_tools.filter(name=approval.tool).first()
        if remember_scopes(approval, tool).wider:
            messages.error(
                request,
                "Nothing was decided: a rule for future runs covers more than this call. "
                "Tick the box that names what it allows, or approve for this run only.",
            )
            return _approval_page(request, approval, status=400)
    try:
        settlement = approval_decide(
            approval_id=approval.pk, actor=portal_actor(request), approve=approve, remember=remember
        )
    except ServiceError as error:
        messages.error(request, f"Refused ({error.status}): {error.detail}")
        return _approval_page(request, approval, status=error.status)
    settled = settlement.approval
    if settlement.won:
        verb = {
            "approve": "Approved",
            "deny": "Denied",
            "remember": "Approved and remembered for this run",
            "remember_policy": "Approved, remembered for this run, and a rule added for new runs",
        }
        messages.success(request, f"{verb[choice]}: {settled.tool} in run {settled.run_id}.")
    else:
        messages.warning(
            request,
            f"Already settled: {settled.status} by {settled_by(settled)}. Nothing was changed.",
        )
    return HttpResponseRedirect(_next_url(request, approval.pk))
