"""The runner's credential lookup: a session token's run, with its budget and policy version.

Every gate decision starts here, so the SELECT is built once per process from the models'
metadata (`fluidbox.prebuilt_sql`) instead of being compiled by the ORM on every call. It
reads the run and its budget; the frozen policy version comes from the per-process cache
keyed by (version, digest) the run froze (`policy_store.frozen_version`), so a fresh
database connection does not have to load and plan the versions table on every call.
"""

from functools import cache

from django.db import connection

from fluidbox.prebuilt_sql import ModelTable, statement_cursor
from governance.models import Run, RunBudget
from governance.policy_store import frozen_version

_runs = ModelTable(Run)
_budgets = ModelTable(RunBudget)


@cache
def _select(vendor: str) -> str:
    return (
        f"SELECT {_runs.columns('r')}, {_budgets.columns('b')} "
        f"FROM {_runs.name} r "
        f"LEFT JOIN {_budgets.name} b ON b.{_budgets.column('run')} = r.{_runs.pk} "
        f"WHERE r.{_runs.column('session_token_hash')} = %s"
    )


def run_for_session_token(token_hash: str) -> Run | None:
    """The run whose session token hashes to `token_hash`, with `run.budget` and
    `run.policy_version` loaded; None when no run has it. Raises
    `policy_store.FrozenVersionMissing` when the run's frozen policy version is not there."""
    with statement_cursor() as cursor:
        cursor.execute(_select(connection.vendor), [token_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    run_end = len(_runs.fields)
    run = _runs.instance(row[:run_end], "r")
    Run._meta.get_field("policy_version").set_cached_value(
        run, frozen_version(run.policy_version_id, run.policy_digest)
    )
    if row[run_end] is not None:  # every run has a budget row; the LEFT JOIN keeps it optional
        budget = _budgets.instance(row[run_end:], "b")
        budget_run = RunBudget._meta.get_field("run")
        budget_run.set_cached_value(budget, run)
        budget_run.remote_field.set_cached_value(run, budget)
    return run
