"""A run's timeline for auditors: every ledger event in seq order, the chain's status, the
frozen run details, live updates over the SSE stream and a JSON Lines export."""

import json

from django.http import StreamingHttpResponse
from django.shortcuts import render

from fluidbox.canonical import digest_of
from governance.models import ApprovalStatus, BrokerStatus, Decision, Run, Source
from governance.policy import escape_invisible
from governance.portal.pages import page_context
from governance.portal.verbatim import arguments_html, highlighted
from ledger.api import event_json
from ledger.chain_checks import chain_verify, latest_ledger_check
from ledger.models import Event, EventType
from ledger.redaction import redact

MAX_ROWS = 5000
DECISION_CHOICES = list(
    dict.fromkeys(
        [d.value for d in Decision]
        + [s.value for s in ApprovalStatus]
        + [s.value for s in BrokerStatus if s.value]
    )
)


def event_decision(data: dict) -> str:
    """The verdict an event records: a gate decision, an approval outcome, a broker status."""
    for key in ("decision", "outcome", "status"):
        value = data.get(key)
        if isinstance(value, str):
            return value
    return ""


def _data(event: Event) -> dict:
    return event.data if isinstance(event.data, dict) else {}


def _decision_and_source(data: dict) -> tuple[str, str]:
    """What the timeline shows, and filters on, as the event's decision and source."""
    source = data.get("source")
    return event_decision(data), source if isinstance(source, str) else ""


def timeline_row(event: Event) -> dict:
    data = _data(event)
    rule = data.get("rule") if isinstance(data.get("rule"), dict) else None
    decision, source = _decision_and_source(data)
    return {
        "seq": event.seq,
        "at": event.at,
        "type": event.type,
        "tool": highlighted(data["tool"], layout_is_visible=False)
        if isinstance(data.get("tool"), str)
        else "",
        "tool_call_id": data.get("tool_call_id") or "",
        "decision": decision,
        "source": source,
        "rule": highlighted(
            f"{rule.get('pattern')} → {rule.get('action')}", layout_is_visible=False
        )
        if rule
        else "",
        "policy_version": data.get("policy_version") or "",
        "approver": highlighted(data["decided_by"], layout_is_visible=False)
        if isinstance(data.get("decided_by"), str)
        else "",
        "latency_ms": data.get("latency_ms") if data.get("latency_ms") is not None else "",
        "reason": data.get("reason") or "",
        "hash": event.hash,
        "data": arguments_html(data),
    }


def _filters(request) -> dict[str, str]:
    allowed = {
        "type": EventType.values,
        "decision": DECISION_CHOICES,
        "source": Source.values,
    }
    chosen = {}
    for name, values in allowed.items():
        value = request.GET.get(name, "")
        if value in values:
            chosen[name] = value
    return chosen


def chain_status(run: Run) -> dict:
    breaks = chain_verify(run.pk)
    if not breaks:
        return {"intact": True, "text": "verified: the hash chain is intact"}
    first = breaks[0]
    return {
        "intact": False,
        "seq": first.seq,
        "text": f"broken at seq {first.seq}: {first.problem}",
        "breaks": breaks,
    }


def ledger_check_status(run: Run, *, whole_org: bool) -> dict:
    """What the latest check of the whole ledger found in this run's organization. It alone
    searches the organization's whole log for leaves whose event is gone, which no longer
    say which run they were of (too slow to do for each page).

    `whole_org`: the viewer may see every run of the organization (its admins, approvers and
    auditors). A member who only invoked this run is told how many problems the others have,
    never their ids."""
    check = latest_ledger_check()
    if check is None:
        return {
            "intact": None,
            "text": "the whole ledger has not been checked yet "
            "(the worker checks it every FLUIDBOX_LEDGER_CHECK_MINUTES, "
            "or run manage.py ledger verify --all)",
        }
    when = check.finished_at.strftime("%Y-%m-%d %H:%M:%S %Z")
    ours = [p for p in check.problems if p.get("org") == run.org_id]
    if not whole_org:
        # Checks recorded before problems carried their run name it in the text.
        this_run = [
            p for p in ours if p.get("run") == str(run.pk) or p["text"].startswith(f"run {run.pk}:")
        ]
        elsewhere = len(ours) - len(this_run)
        ours = this_run
        if elsewhere:
            ours.append(
                {
                    "text": f"{elsewhere} problem(s) outside this run: ask an auditor of the "
                    "organization"
                }
            )
    texts = [p["text"] for p in ours]
    if not texts:
        return {
            "intact": True,
            "text": f"the organization's ledger was intact when checked at {when}",
        }
    return {
        "intact": False,
        "text": f"the check of the whole ledger at {when} found problems in the organization's "
        f"ledger; the first: {texts[0]}",
        "problems": texts,
    }


def frozen_details(run: Run) -> dict:
    budget = getattr(run, "budget", None)
    return {
        "tools": list(run.frozen_tools.select_related("connection").order_by("name")),
        "bindings": list(run.bindings.select_related("connection").order_by("connection__slug")),
        "budget": budget,
        # As run.created recorded it: redacted (a clone URL's token, `https://x:TOKEN@host`),
        # and marked as the agent's name is: a CI names it, a pull request's head repository
        # is anyone's (`аcme/app` with a Cyrillic `а` must not read as acme/app).
        "source": highlighted(
            json.dumps(redact(run.source).data, ensure_ascii=False, sort_keys=True),
            layout_is_visible=False,
        ),
    }


def _as_frozen(run: Run, tools: list[tuple]) -> dict:
    """The frozen details the page shows, in the shape `run.created` recorded them."""
    invoker = run.invoked_by.get_username() if run.invoked_by_id else None
    return {
        "agent": run.agent,
        "source": run.source,
        "invoked_by": invoker,
        "created_by": run.created_by or None,
        "policy_version": run.policy_version.number,
        "policy_digest": run.policy_digest,
        "autonomy": run.autonomy,
        "trust_tier": run.trust_tier,
        "budget_tokens": run.budget_tokens,
        "tool_set_digest": run.tool_set_digest,
        "tools": sorted(name for name, _, _ in tools),
        "uncallable": sorted(name for name, _, callable_ in tools if not callable_),
        "connections": sorted(
            [slug, generation]
            for slug, generation in run.bindings.values_list(
                "connection__slug", "authorization_generation"
            )
        ),
    }


def frozen_disagreements(run: Run) -> list[str]:
    """Each frozen detail whose row differs from what the run's `run.created` event (seq 1)
    recorded. The rows are not in the ledger: someone writing to the database could change a
    run's trust tier or tools under a chain that still verifies. The event is what holds."""
    created = (
        Event.objects.filter(run=run, seq=1, type=EventType.RUN_CREATED)
        .values_list("data", flat=True)
        .first()
    )
    if not isinstance(created, dict):
        return ["the run has no run.created event to check its frozen details against"]
    tools = list(run.frozen_tools.values_list("name", "definition_digest", "callable"))
    shown = _as_frozen(run, tools)
    # Compared as redacted when the event was written, or as written in full.
    redacted = redact(shown).data
    found = []
    for name, value in shown.items():
        if name not in created:
            continue
        recorded = created[name]
        if name == "connections" and isinstance(recorded, list):
            recorded = sorted(
                [c.get("slug"), c.get("generation")] for c in recorded if isinstance(c, dict)
            )
        if name == "invoked_by":
            recorded = recorded or None
        if recorded not in (value, redacted[name]):
            found.append(
                f"{name}: the row shown says {json.dumps(value)[:120]}, "
                f"run.created recorded {json.dumps(recorded)[:120]}"
            )
    if digest_of(sorted(list(tool) for tool in tools)) != created.get("tool_set_digest"):
        found.append(
            "tools: the frozen tools' names, definition digests and callable flags do not "
            "hash to the tool_set_digest run.created recorded"
        )
    return found


def _passes(event: Event, filters: dict[str, str]) -> bool:
    decision, source = _decision_and_source(_data(event))
    return filters.get("decision", decision) == decision and filters.get("source", source) == source


def timeline_rows(run: Run, filters: dict[str, str]) -> tuple[list[dict], bool]:
    """The rows of the run's events that pass the filters, in seq order, at most MAX_ROWS, and
    whether more passed. Decision and source live inside each event's data, so they are read
    over every event of the run: filtering only the first MAX_ROWS events would hide every
    later match without saying so (a run padded with denied calls would hide its allowed one)."""
    events = Event.objects.filter(run=run).order_by("seq")
    if "type" in filters:
        events = events.filter(type=filters["type"])
    rows: list[dict] = []
    for event in events.iterator(chunk_size=1000):
        if not _passes(event, filters):
            continue
        if len(rows) == MAX_ROWS:
            return rows, True
        rows.append(timeline_row(event))
    return rows, False


def run_timeline_view(request, run: Run, *, whole_org: bool):
    filters = _filters(request)
    rows, truncated = timeline_rows(run, filters)
    last_seq = Event.objects.filter(run=run).order_by("-seq").values_list("seq", flat=True).first()
    context = page_context(
        request,
        # A page title shows no marks: the agent's hidden characters are written as escapes.
        f"Run {escape_invisible(run.agent, layout_is_visible=False)} {str(run.pk)[:8]}",
        run=run,
        rows=rows,
        truncated=truncated,
        last_seq=last_seq or 0,
        filters=filters,
        type_choices=EventType.values,
        decision_choices=DECISION_CHOICES,
        source_choices=Source.values,
        chain=chain_status(run),
        ledger_check=ledger_check_status(run, whole_org=whole_org),
        frozen=frozen_details(run),
        frozen_differs=frozen_disagreements(run),
        opts=Run._meta,
    )
    return render(request, "portal/run_timeline.html", context)


def run_export_view(request, run: Run) -> StreamingHttpResponse:
    """Every event of the run as JSON Lines, exactly as the events API serves them."""

    def lines():
        for event in Event.objects.filter(run=run).order_by("seq").iterator(chunk_size=1000):
            yield json.dumps(event_json(event), ensure_ascii=False, sort_keys=True) + "\n"

    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}.jsonl"'
    return response
