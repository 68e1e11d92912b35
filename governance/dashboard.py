"""Selectors for the admin index: recent decisions, pending approvals, most denied tools."""

from datetime import timedelta

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from governance.authentication import Actor
from governance.models import Approval, ApprovalStatus, Decision, Role, ToolCall
from governance.selectors import pending_approvals_for

WINDOW = timedelta(hours=24)
VERDICTS = (Decision.ALLOW, Decision.DENY, Decision.PENDING)
READ_ROLES = (Role.ADMIN, Role.APPROVER, Role.AUDITOR)


def runs_visible_to(actor: Actor, prefix: str = "run__") -> Q:
    """Runs of orgs where the actor is staff, and runs the actor invoked."""
    staff_orgs = [org for org, role in actor.roles.items() if role in READ_ROLES]
    visible = Q(**{f"{prefix}org_id__in": staff_orgs})
    if actor.user is not None:
        visible |= Q(
            **{f"{prefix}invoked_by": actor.user, f"{prefix}org_id__in": list(actor.roles)}
        )
    return visible


def visible_tool_calls(actor: Actor) -> QuerySet[ToolCall]:
    return ToolCall.objects.filter(runs_visible_to(actor))


def _percent(count: int, largest: int) -> int:
    return round(100 * count / largest) if largest else 0


def decisions_by_source(calls: QuerySet[ToolCall]) -> list[dict]:
    """One row per deciding source with its allow/deny/pending counts, largest first."""
    rows: dict[str, dict] = {}
    for source, decision, count in calls.values_list("source", "decision").annotate(n=Count("id")):
        row = rows.setdefault(source or "none", {"source": source or "none", "total": 0})
        row[decision] = row.get(decision, 0) + count
        row["total"] += count
    ordered = sorted(rows.values(), key=lambda r: (-r["total"], r["source"]))
    largest = max((r["total"] for r in ordered), default=0)
    for row in ordered:
        row["segments"] = [
            {
                "verdict": v.value,
                "count": row.get(v, 0),
                "percent": _percent(row.get(v, 0), largest),
            }
            for v in VERDICTS
            if row.get(v, 0)
        ]
        offset = 0
        for segment in row["segments"]:  # where each stacked bar starts (an SVG x)
            segment["offset"] = offset
            offset += segment["percent"]
    return ordered


def decisions_by_verdict(calls: QuerySet[ToolCall]) -> list[dict]:
    counts = dict(calls.values_list("decision").annotate(n=Count("id")))
    largest = max(counts.values(), default=0)
    return [
        {
            "verdict": v.value,
            "count": counts.get(v, 0),
            "percent": _percent(counts.get(v, 0), largest),
        }
        for v in VERDICTS
    ]


def top_denied_tools(calls: QuerySet[ToolCall], limit: int = 5) -> list[dict]:
    rows = list(
        calls.filter(decision=Decision.DENY)
        .values("tool")
        .annotate(count=Count("id"))
        .order_by("-count", "tool")[:limit]
    )
    largest = rows[0]["count"] if rows else 0
    return [{**row, "percent": _percent(row["count"], largest)} for row in rows]


def dashboard_stats(actor: Actor, *, now=None) -> dict:
    now = now or timezone.now()
    since = now - WINDOW
    recent = visible_tool_calls(actor).filter(created_at__gte=since)
    by_verdict = decisions_by_verdict(recent)
    decidable = pending_approvals_for(actor).filter(expires_at__gt=now)
    waiting = Approval.objects.filter(
        runs_visible_to(actor), status=ApprovalStatus.PENDING, expires_at__gt=now
    )
    return {
        "since": since,
        "total": sum(row["count"] for row in by_verdict),
        "by_verdict": by_verdict,
        "by_source": decisions_by_source(recent),
        "top_denied": top_denied_tools(recent),
        "pending_for_me": decidable.count(),
        "pending_all": waiting.count(),
        "pending_list": list(decidable.select_related("run")[:5]),
    }
