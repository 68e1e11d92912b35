"""Prometheus metrics: what the gate decides, how fast, who waits for humans and how long,
what failed closed. `fluidbox_` names, base units, `_total` counters, labels with a bounded
set of values only (never a run, a user or an argument).

Services call the small `*_recorded` hooks below after their transaction commits, so a
counter moves exactly when the ledger row it mirrors exists. Everything else (approvals
pending, the vault's state, audit sinks) is read from the database when Prometheus scrapes
(`endpoint.StateCollector`): a gauge kept in a process would be wrong in every other one.

With FLUIDBOX_METRICS=0 every hook returns at once (the bench's "metrics off").
"""

from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from prometheus_client import Counter, Histogram

ENABLED = settings.FLUIDBOX_METRICS_ENABLED

# Seconds: the gate is milliseconds; a brokered call is an upstream round trip.
_FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_UPSTREAM = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 60.0)
# Humans: seconds to the longest approval timeout (7 days).
_HUMAN = (5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600)

GATE_DECISIONS = Counter(
    "fluidbox_gate_decisions",
    "New gate decisions by verdict (allow, deny, pending) and the stage that decided "
    "(source: budget, capability, binding, schema, trust_tier, policy, approval)",
    ["decision", "source"],
)
GATE_DECISION_SECONDS = Histogram(
    "fluidbox_gate_decision_duration_seconds",
    "Time to decide and record a new gate decision (long-poll waits excluded)",
    ["decision"],
    buckets=_FAST,
)
FAIL_CLOSED = Counter(
    "fluidbox_gate_fail_closed",
    "Calls made ASK or deny by an error rather than a rule: a policy evaluation error, "
    "a schema validator crash, a sealed or failing vault",
    ["cause"],
)
APPROVAL_WAIT_SECONDS = Histogram(
    "fluidbox_approval_wait_seconds",
    "From approval.requested to its settlement, by outcome (approved, denied, timed_out)",
    ["outcome"],
    buckets=_HUMAN,
)
APPROVAL_TIMEOUTS = Counter(
    "fluidbox_approval_timeouts",
    "Approvals settled as timed_out (the call was denied)",
)
BROKERED_CALLS = Counter(
    "fluidbox_brokered_calls",
    "Brokered MCP calls by connection and outcome (succeeded, tool_error, failed, refused)",
    ["connection", "outcome"],
)
BROKERED_CALL_SECONDS = Histogram(
    "fluidbox_brokered_call_duration_seconds",
    "Upstream time of brokered MCP calls, by connection",
    ["connection"],
    buckets=_UPSTREAM,
)
BUDGET_RESERVATIONS = Counter(
    "fluidbox_budget_reservations",
    "Budget reservations by outcome (reserved, denied)",
    ["outcome"],
)
LEDGER_EVENTS = Counter(
    "fluidbox_ledger_events_appended",
    "Ledger events appended (committed), by type",
    ["type"],
)
CHAIN_VERIFICATIONS = Counter(
    "fluidbox_ledger_chain_verifications",
    "Run chains verified, by result (intact, broken)",
    ["result"],
)
CHAIN_VERIFY_FAILURES = Counter(
    "fluidbox_ledger_chain_verify_failures",
    "Breaks found by chain and log verification (a gap, an altered row, a missing tail, "
    "an orphaned or altered leaf)",
)
NOTIFICATION_DELIVERIES = Counter(
    "fluidbox_notification_deliveries",
    "Approval notification attempts by channel kind and outcome (sent, retrying, failed)",
    ["channel", "outcome"],
)
HTTP_REQUESTS = Counter(
    "fluidbox_http_requests",
    "HTTP requests by method, URL route (the pattern, not the path) and status code",
    ["method", "route", "status"],
)
HTTP_REQUEST_SECONDS = Histogram(
    "fluidbox_http_request_duration_seconds",
    "HTTP request time by method and URL route",
    ["method", "route"],
    buckets=_FAST,
)


def initialize() -> None:
    """Create every known label set at zero (at start, GovernanceConfig.ready): a series that
    first appears at 1 hides that increment from `increase()`, and from alerts built on it."""
    if not ENABLED:
        return
    from governance.gate.decision import FailClosed, Outcome
    from governance.models import Source

    for decision in Outcome:
        if decision == Outcome.PENDING:
            GATE_DECISIONS.labels(decision, Source.APPROVAL)
            continue
        for source in Source:  # every decision names its deciding stage
            GATE_DECISIONS.labels(decision, source)
    for cause in FailClosed:
        FAIL_CLOSED.labels(cause)
    for outcome in ("approved", "denied", "timed_out"):
        APPROVAL_WAIT_SECONDS.labels(outcome)
    for outcome in ("reserved", "denied"):
        BUDGET_RESERVATIONS.labels(outcome)
    for result in ("intact", "broken"):
        CHAIN_VERIFICATIONS.labels(result)


def gate_decision_recorded(*, decision: str, source: str | None, seconds: float) -> None:
    """A new decision committed (a retry answered from its record is not one)."""
    if not ENABLED:
        return
    GATE_DECISIONS.labels(decision, source or "none").inc()
    GATE_DECISION_SECONDS.labels(decision).observe(seconds)


def fail_closed_recorded(cause: str) -> None:
    if ENABLED:
        FAIL_CLOSED.labels(cause).inc()


def approval_settled(*, outcome: str, requested_at: datetime) -> None:
    """Counted when the settling transaction commits (a rolled-back decision never was)."""
    if not ENABLED:
        return
    waited = max(0.0, (timezone.now() - requested_at).total_seconds())

    def count() -> None:
        APPROVAL_WAIT_SECONDS.labels(outcome).observe(waited)
        if outcome == "timed_out":
            APPROVAL_TIMEOUTS.inc()

    transaction.on_commit(count)


def brokered_call_recorded(*, connection: str, outcome: str, seconds: float | None) -> None:
    if not ENABLED:
        return
    BROKERED_CALLS.labels(connection, outcome).inc()
    if seconds is not None:
        BROKERED_CALL_SECONDS.labels(connection).observe(seconds)


def budget_reservation_recorded(outcome: str) -> None:
    if ENABLED:
        BUDGET_RESERVATIONS.labels(outcome).inc()


def ledger_events_appended(types: Iterable[str]) -> None:
    """Called inside the appending transaction; counts when (and if) it commits."""
    if not ENABLED:
        return
    children = [LEDGER_EVENTS.labels(str(type)) for type in types]
    transaction.on_commit(lambda: [child.inc() for child in children])


def chain_verified(breaks: int) -> None:
    if not ENABLED:
        return
    CHAIN_VERIFICATIONS.labels("broken" if breaks else "intact").inc()
    if breaks:
        CHAIN_VERIFY_FAILURES.inc(breaks)


def log_verified(problems: int) -> None:
    """An organization's log checked (its leaves against the signed root, orphaned leaves)."""
    if ENABLED and problems:
        CHAIN_VERIFY_FAILURES.inc(problems)


def notification_attempted(*, channel: str, outcome: str) -> None:
    if ENABLED:
        NOTIFICATION_DELIVERIES.labels(channel, outcome).inc()


def http_request_recorded(*, method: str, route: str, status: int, seconds: float) -> None:
    HTTP_REQUESTS.labels(method, route, str(status)).inc()
    HTTP_REQUEST_SECONDS.labels(method, route).observe(seconds)
