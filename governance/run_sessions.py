"""The runner's credential lookup: a session token's run, with its budget and policy version.

Every gate decision starts here, so the three-table SELECT is built once per process from the
models' metadata (`fluidbox.prebuilt_sql`) instead of being compiled by the ORM on every call.

The policy version's text and document are left out: the compiled policy is cached per
process by (version, digest) and reads the document (a deferred field) only on a miss.
"""

from functools import cache

from django.db import connection

from fluidbox.prebuilt_sql import ModelTable
from governance.models import PolicyVersion, Run, RunBudget

_runs = ModelTable(Run)
_budgets = ModelTable(RunBudget)
_versions = ModelTable(PolicyVersion, leave_out=frozenset({"content", "document"}))


@cache
def _select(vendor: str) -> str:
    return (
        f"SELECT {_runs.columns('r')}, {_budgets.columns('b')}, {_versions.columns('v')} "
        f"FROM {_runs.name} r "
        f"JOIN {_versions.name} v "
        f"ON v.{_versions.pk} = r.{_runs.column('policy_version')} "
        f"LEFT JOIN {_budgets.name} b ON b.{_budgets.column('run')} = r.{_runs.pk} "
        f"WHERE r.{_runs.column('session_token_hash')} = %s"
    )


def run_for_session_token(token_hash: str) -> Run | None:
    """The run whose session token hashes to `token_hash`, with `run.budget` and
    `run.policy_version` loaded; None when no run has it."""
    with connection.cursor() as cursor:
        cursor.execute(_select(connection.vendor), [token_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    run_end = len(_runs.fields)
    budget_end = run_end + len(_budgets.fields)
    run = _runs.instance(row[:run_end], "r")
    Run._meta.get_field("policy_version").set_cached_value(
        run, _versions.instance(row[budget_end:], "v")
    )
    if row[run_end] is not None:  # every run has a budget row; the LEFT JOIN keeps it optional
        budget = _budgets.instance(row[run_end:budget_end], "b")
        budget_run = RunBudget._meta.get_field("run")
        budget_run.set_cached_value(budget, run)
        budget_run.remote_field.set_cached_value(run, budget)
    return run
