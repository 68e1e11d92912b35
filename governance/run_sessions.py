"""The runner's credential lookup: a session token's run, with its budget, policy version,
the head of its ledger chain and its organization's agent-secrets stamp.

Every gate decision starts here, so the SELECT is built once per process from the models'
metadata (`fluidbox.prebuilt_sql`) instead of being compiled by the ORM on every call. It
reads the run and its budget; the frozen policy version comes from the per-process cache
keyed by (version, digest) the run froze (`policy_store.frozen_version`), so a fresh
database connection does not have to load and plan the versions table on every call. The
chain's head as read here lets the gate record its decision in one statement
(`ledger.services.events_append_at_head`), which writes nothing if the head has moved since.
"""

from functools import cache

from django.db import connection

from fluidbox.prebuilt_sql import ModelTable, statement_cursor
from governance.binding_state import (
    BindingNow,
    frozen_tool_with_binding,
    tool_from_row,
    tool_join_params,
    tool_lateral_join,
)
from governance.models import FrozenTool, Organization, Run, RunBudget
from governance.policy_store import frozen_version
from ledger.models import RunCounter

_runs = ModelTable(Run)
_budgets = ModelTable(RunBudget)
_counters = ModelTable(RunCounter)
_orgs = ModelTable(Organization)
# What the lookup reads after the run's and its budget's columns: the chain's head, and the
# organization's agent-secrets stamp.
_HEAD_COLUMNS = 2
_AFTER_BUDGET_COLUMNS = _HEAD_COLUMNS + 1
# The instance attributes the head and the stamp are kept in.
_HEAD = "_ledger_head_as_read"
_STAMP = "_agent_secrets_stamp_as_read"


def ledger_head_as_read(run: Run) -> tuple[int, str] | None:
    """The run's ledger head (last seq, last hash) as its token check read it, or as the
    gate's last record on this instance left it; None when not known (a run loaded
    otherwise, or with no event yet)."""
    return run.__dict__.get(_HEAD)


def ledger_head_moved(run: Run, head: tuple[int, str] | None) -> None:
    """Where the chain ends now, as an append through this instance has just left it."""
    run.__dict__[_HEAD] = head


def agent_secrets_stamp_as_read(run: Run) -> str | None:
    """The run's organization's `agent_secrets_stamp` as the token check read it."""
    return run.__dict__.get(_STAMP)


@cache
def _select(vendor: str) -> str:
    return (
        f"SELECT {_runs.columns('r')}, {_budgets.columns('b')}, "
        f"c.{_counters.column('last_seq')}, c.{_counters.column('last_hash')}, "
        f"o.{_orgs.column('agent_secrets_stamp')} "
        f"FROM {_runs.name} r "
        f"JOIN {_orgs.name} o ON o.{_orgs.pk} = r.{_runs.column('org')} "
        f"LEFT JOIN {_budgets.name} b ON b.{_budgets.column('run')} = r.{_runs.pk} "
        f"LEFT JOIN {_counters.name} c ON c.{_counters.column('run')} = r.{_runs.pk} "
        f"WHERE r.{_runs.column('session_token_hash')} = %s"
    )


@cache
def _select_with_tool(vendor: str) -> str:
    select, where = _select(vendor).split(" WHERE ")
    columns, tables = select.split(" FROM ")
    join = tool_lateral_join(vendor, f"r.{_runs.pk}", f"r.{_runs.column('org')}")
    return f"{columns}, ft.* FROM {tables} {join} WHERE {where}"


def run_for_session_token(token_hash: str) -> Run | None:
    """The run whose session token hashes to `token_hash`, with `run.budget` and
    `run.policy_version` loaded; None when no run has it. Raises
    `policy_store.FrozenVersionMissing` when the run's frozen policy version is not there."""
    with statement_cursor() as cursor:
        cursor.execute(_select(connection.vendor), [token_hash])
        row = cursor.fetchone()
    return _run_from_row(row)


def run_and_tool_for_session_token(
    token_hash: str, tool: str
) -> tuple[Run | None, tuple[FrozenTool | None, BindingNow | None] | None]:
    """`run_for_session_token`, and the run's frozen tool `tool` with its binding as it is
    now (`binding_state.frozen_tool_with_binding`), read in the same round trip: the MCP
    endpoint's token check, for the tool a `tools/call` names. (None, None) when no run has
    the token."""
    if connection.vendor != "postgresql":  # no LATERAL; a round trip costs SQLite nothing
        run = run_for_session_token(token_hash)
        return run, (frozen_tool_with_binding(run, tool) if run is not None else None)
    with statement_cursor() as cursor:
        cursor.execute(_select_with_tool(connection.vendor), tool_join_params(tool) + [token_hash])
        row = cursor.fetchone()
    run = _run_from_row(row)
    if run is None:
        return None, None
    tool_at = len(_runs.fields) + len(_budgets.fields) + _AFTER_BUDGET_COLUMNS
    return run, tool_from_row(row[tool_at:], run)


def _run_from_row(row) -> Run | None:
    if row is None:
        return None
    run_end = len(_runs.fields)
    run = _runs.instance(row[:run_end], "r")
    Run._meta.get_field("policy_version").set_cached_value(
        run, frozen_version(run.policy_version_id, run.policy_digest)
    )
    if row[run_end] is not None:  # every run has a budget row; the LEFT JOIN keeps it optional
        budget = _budgets.instance(row[run_end : run_end + len(_budgets.fields)], "b")
        budget_run = RunBudget._meta.get_field("run")
        budget_run.set_cached_value(budget, run)
        budget_run.remote_field.set_cached_value(run, budget)
    head_at = run_end + len(_budgets.fields)
    last_seq, last_hash = row[head_at : head_at + _HEAD_COLUMNS]
    ledger_head_moved(run, (last_seq, last_hash) if last_seq is not None else None)
    run.__dict__[_STAMP] = row[head_at + _HEAD_COLUMNS]
    return run
