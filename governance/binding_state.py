"""A run's binding to a connection and that connection as they are now, read in one statement.

The gate's frozen-set stage checks it before deciding, the broker again right before it
unseals the credential, and the MCP catalog for every tool it lists. Each read brings
everything the check needs in one round trip: the binding, the connection's current row,
whether a personal connection's owner is still an active member of the run's organization,
and whether the vault's keyring is passphrase-protected. The statements are prebuilt
(`fluidbox.prebuilt_sql`), like the gate's own hot path, and never carry the connection's
photographs (they can be large, and nothing here needs them).
"""

from dataclasses import dataclass
from functools import cache

from django.contrib.auth.models import User
from django.db import connection as db

from fluidbox.prebuilt_sql import ModelTable, statement_cursor
from governance.models import (
    Connection,
    FrozenBinding,
    FrozenTool,
    Membership,
    Organization,
    Run,
    RunStatus,
    ToolCall,
    VaultKeyring,
)
from governance.vault import KEYRING

_tools = ModelTable(FrozenTool)
# Left out, they are deferred fields: read only if something asks for them.
_connections = ModelTable(Connection, leave_out=frozenset({"photograph", "previous_photograph"}))
_orgs = ModelTable(Organization)
_bindings = ModelTable(FrozenBinding)
_tool_calls = ModelTable(ToolCall)
_memberships = ModelTable(Membership)
_keyrings = ModelTable(VaultKeyring)
_runs = ModelTable(Run)
_users = ModelTable(User)


@dataclass(frozen=True)
class BindingNow:
    """`binding` is None when the run has no binding to the connection; otherwise its
    `connection` is the connection's row as read with it."""

    binding: FrozenBinding | None
    # The connection's owner is an active member of the run's org, and their account is
    # active: a deactivated account (README: how someone is taken out) lends nothing.
    owner_active: bool
    keyring_protected: bool | None  # the keyring's passphrase_protected; None: no keyring yet
    # The run is still active, read with the binding: a run finished after its token was
    # checked (before the broker's re-read) must not have its call run.
    run_active: bool = True


def _state_columns(org: str = "%s", run: str = "%s") -> str:
    """The keyring, owner and run columns that follow a binding and its connection (`b`,
    `c`); `org` and `run` are the run's organization and id (parameters, in that order, or
    columns of an enclosing query)."""
    member = _memberships
    return (
        f"k.{_keyrings.column('passphrase_protected')}, "
        f"EXISTS (SELECT 1 FROM {member.name} m "
        f"JOIN {_users.name} u ON u.{_users.pk} = m.{member.column('user')} "
        f"WHERE m.{member.column('user')} = c.{_connections.column('owner')} "
        f"AND m.{member.column('org')} = {org} AND m.{member.column('is_active')} "
        f"AND u.{_users.column('is_active')}), "
        f"EXISTS (SELECT 1 FROM {_runs.name} rs WHERE rs.{_runs.pk} = {run} "
        f"AND rs.{_runs.column('status')} = '{RunStatus.ACTIVE}')"
    )


def _keyring_join() -> str:
    return f"LEFT JOIN {_keyrings.name} k ON k.{_keyrings.column('name')} = %s"


@cache
def _binding_select(vendor: str) -> str:
    bindings = _bindings
    return (
        f"SELECT {_connections.columns('c')}, {bindings.columns('b')}, {_state_columns()} "
        f"FROM (SELECT 1 AS one) one "
        f"LEFT JOIN {bindings.name} b "
        f"ON b.{bindings.column('run')} = %s AND b.{bindings.column('connection')} = %s "
        f"LEFT JOIN {_connections.name} c "
        f"ON c.{_connections.pk} = b.{bindings.column('connection')} "
        f"{_keyring_join()}"
    )


@cache
def _tool_statement(vendor: str, run: str = "%s", org: str = "%s") -> str:
    """The frozen tool by name with its connection, organization and binding state; `run`
    and `org` are parameters, or columns of an enclosing query (`tool_lateral_join`)."""
    tools, connections, bindings = _tools, _connections, _bindings
    return (
        f"SELECT {tools.columns('t')}, {connections.columns('c')}, {_orgs.columns('o')}, "
        f"{bindings.columns('b')}, {_state_columns(org, run)} "
        f"FROM {tools.name} t "
        f"LEFT JOIN {connections.name} c ON c.{connections.pk} = t.{tools.column('connection')} "
        f"LEFT JOIN {_orgs.name} o ON o.{_orgs.pk} = c.{connections.column('org')} "
        f"LEFT JOIN {bindings.name} b ON b.{bindings.column('run')} = t.{tools.column('run')} "
        f"AND b.{bindings.column('connection')} = t.{tools.column('connection')} "
        f"{_keyring_join()} "
        f"WHERE t.{tools.column('run')} = {run} AND t.{tools.column('name')} = %s"
    )


def tool_lateral_join(vendor: str, run_id: str, org_id: str) -> str:
    """PostgreSQL: `frozen_tool_with_binding`'s read as a LEFT JOIN LATERAL (alias `ft`) of
    a query that selects the run (its id and organization the columns named), for the MCP
    endpoint's token check to read the called tool in the same round trip. Parameters: the
    keyring name, then the tool's name (`tool_join_params`); its columns come after the
    query's own, laid out as `tool_from_row` reads them."""
    return f"LEFT JOIN LATERAL ({_tool_statement(vendor, run_id, org_id)}) ft ON true"


def tool_join_params(name: str) -> list:
    return [KEYRING, _tools.prepared("name", name)]


@cache
def _claim_statement(vendor: str) -> str:
    """Claims an idle call of a run that is still active. On PostgreSQL the run's row is
    locked FOR SHARE: a claim either commits before `run_finish` changes the run's status
    (which then reads the call as in flight) or waits for the finish and claims nothing, so
    the calls `run.finished` lists as in flight are exactly those that can still be
    recorded after it. SQLite runs one writer at a time, which orders them the same way."""
    status = _tool_calls.column("broker_status")
    lock = " FOR SHARE" if vendor == "postgresql" else ""
    return (
        f"UPDATE {_tool_calls.name} SET {status} = %s "
        f"WHERE {_tool_calls.pk} = %s AND {status} = %s "
        f"AND EXISTS (SELECT 1 FROM {_runs.name} rs WHERE rs.{_runs.pk} = %s "
        f"AND rs.{_runs.column('status')} = '{RunStatus.ACTIVE}'{lock}) "
        f"RETURNING {_tool_calls.pk}"
    )


@cache
def _claim_with_binding_statement(vendor: str) -> str:
    """PostgreSQL: the claim as a data-modifying CTE, the binding read as its SELECT."""
    select = _binding_select(vendor).removeprefix("SELECT ")
    return (
        f"WITH claimed AS ({_claim_statement(vendor)}) "
        f"SELECT (SELECT count(*) FROM claimed), {select}"
    )


@cache
def _insert_with_binding_statement(vendor: str) -> str:
    """PostgreSQL: the tool call's INSERT as a data-modifying CTE, the binding read as its
    SELECT."""
    select = _binding_select(vendor).removeprefix("SELECT ")
    return (
        f"WITH inserted AS ({_tool_calls.insert_statement(1)}) "
        f"SELECT (SELECT {_tool_calls.pk} FROM inserted), {select}"
    )


@cache
def _all_bindings_statement(vendor: str) -> str:
    return (
        f"SELECT {_connections.columns('c')}, {_bindings.columns('b')}, {_state_columns()} "
        f"FROM {_bindings.name} b "
        f"JOIN {_connections.name} c ON c.{_connections.pk} = b.{_bindings.column('connection')} "
        f"{_keyring_join()} "
        f"WHERE b.{_bindings.column('run')} = %s"
    )


def _state(row, run: Run) -> BindingNow:
    """A row of `_connections.columns('c')`, `_bindings.columns('b')`, `_state_columns()`."""
    connection_end = len(_connections.fields)
    binding_end = connection_end + len(_bindings.fields)
    protected, owner_active, run_active = row[binding_end : binding_end + 3]
    keyring_protected = None if protected is None else bool(protected)
    if row[connection_end] is None:  # no binding row: the LEFT JOIN gave NULLs
        return BindingNow(None, False, keyring_protected, bool(run_active))
    connection = _connections.instance(row[:connection_end], "c")
    binding = _bindings.instance(row[connection_end:binding_end], "b")
    FrozenBinding._meta.get_field("connection").set_cached_value(binding, connection)
    FrozenBinding._meta.get_field("run").set_cached_value(binding, run)
    return BindingNow(binding, bool(owner_active), keyring_protected, bool(run_active))


def frozen_tool_with_binding(run: Run, name: str) -> tuple[FrozenTool | None, BindingNow | None]:
    """The run's frozen tool `name` (None: there is none) with its connection and the
    connection's organization, and, for a brokered tool, its binding as it is now."""
    with statement_cursor() as cursor:
        cursor.execute(
            _tool_statement(db.vendor),
            [
                run.org_id,
                _runs.prepared("id", run.pk),
                KEYRING,
                _tools.prepared("run", run.pk),
                _tools.prepared("name", name),
            ],
        )
        row = cursor.fetchone()
    return tool_from_row(row, run)


def tool_from_row(row, run: Run) -> tuple[FrozenTool | None, BindingNow | None]:
    """The tool and binding state from a row of `_tool_statement`'s columns (all NULL, or
    None: there is no such tool)."""
    if row is None or row[0] is None:
        return None, None
    tool_end = len(_tools.fields)
    tool = _tools.instance(row[:tool_end], "t")
    FrozenTool._meta.get_field("run").set_cached_value(tool, run)
    if tool.connection_id is None:
        return tool, None
    connection_end = tool_end + len(_connections.fields)
    org_end = connection_end + len(_orgs.fields)
    connection = _connections.instance(row[tool_end:connection_end], "c")
    Connection._meta.get_field("org").set_cached_value(
        connection, _orgs.instance(row[connection_end:org_end], "o")
    )
    FrozenTool._meta.get_field("connection").set_cached_value(tool, connection)
    state = _state(row[tool_end:connection_end] + row[org_end:], run)
    if state.binding is not None:
        # The binding's connection is the tool's: one row, read once.
        FrozenBinding._meta.get_field("connection").set_cached_value(state.binding, connection)
    return tool, state


def binding_now(run: Run, connection_id: int) -> BindingNow:
    """The run's binding to `connection_id` and the connection, as they are now."""
    with statement_cursor() as cursor:
        cursor.execute(_binding_select(db.vendor), _binding_params(run, connection_id))
        return _state(cursor.fetchone(), run)


def claim_with_binding(call: ToolCall, run: Run, connection_id: int, *, running: str, idle: str):
    """Claim the call for the broker (its status from `idle` to `running`) and re-read the
    binding, for the check right before the credential is unsealed: (claimed, BindingNow).

    On PostgreSQL both happen in one statement (the claim in a data-modifying CTE), whose
    snapshot is taken as it starts: it sees every revocation, re-authorization and consent
    change committed before it, as a read sent after the claim would. Only a claim that has
    to wait for another transaction's lock on this tool-call row could see an older state,
    and every transaction that locks an allowed, unbrokered call's row is a concurrent claim
    of the same call, which wins it (this one then claims nothing and unseals nothing).
    SQLite, which has no data-modifying CTEs, runs the two statements one after the other.
    A finished run's call is never claimed (see `_claim_statement`): (False, None) then.
    """
    claim = _claim_statement(db.vendor)
    claim_params = [
        running,
        _tool_calls.prepared("id", call.pk),
        idle,
        _runs.prepared("id", run.pk),
    ]
    select = _binding_select(db.vendor)
    select_params = _binding_params(run, connection_id)
    with statement_cursor() as cursor:
        if db.vendor == "postgresql":
            statement = _claim_with_binding_statement(db.vendor)
            cursor.execute(statement, claim_params + select_params)
            row = cursor.fetchone()
            return bool(row[0]), _state(row[1:], run)
        cursor.execute(claim, claim_params)
        claimed = cursor.fetchone() is not None
        if not claimed:
            return False, None
        cursor.execute(select, select_params)
        return True, _state(cursor.fetchone(), run)


def _binding_params(run: Run, connection_id: int) -> list:
    """`_binding_select`'s parameters."""
    return [
        run.org_id,
        _runs.prepared("id", run.pk),
        _bindings.prepared("run", run.pk),
        _bindings.prepared("connection", connection_id),
        KEYRING,
    ]


def binding_read(run: Run, connection_id: int) -> tuple[str, list]:
    """The SELECT of the run's binding to `connection_id` as it is now, and its parameters:
    for a statement that writes the call it re-checks, in the same snapshot (the gate's
    record at the ledger head). `binding_from_row` reads its row."""
    return _binding_select(db.vendor), _binding_params(run, connection_id)


def binding_from_row(row, run: Run) -> BindingNow:
    return _state(row, run)


def insert_claimed_with_binding(call: ToolCall, run: Run, connection_id: int) -> BindingNow:
    """Insert `call`, which the caller has marked claimed by the broker, and re-read the
    binding to `connection_id` for the check right before the credential is unsealed.

    The gate records a brokered call it has just allowed this way (see
    `governance.services.gate`): on PostgreSQL in one statement, the INSERT a data-modifying
    CTE of the SELECT that reads the binding. The statement's snapshot is taken as it starts,
    after every stage of the gate ran, so it sees every revocation, re-authorization and
    consent change committed before it, as the broker's separate claim did. A new row cannot
    have been claimed by anyone else; a concurrent request with the same ids makes the INSERT
    fail on the unique index (IntegrityError, as before), and that request claims nothing.
    SQLite, which has no data-modifying CTEs, runs the two statements one after the other.
    """
    select_params = _binding_params(run, connection_id)
    with statement_cursor() as cursor:
        if db.vendor != "postgresql":
            _tool_calls.insert(cursor, [call])
            cursor.execute(_binding_select(db.vendor), select_params)
            return _state(cursor.fetchone(), run)
        cursor.execute(
            _insert_with_binding_statement(db.vendor),
            _tool_calls.insert_params([call]) + select_params,
        )
        row = cursor.fetchone()
    _tool_calls.adopt([call], [row[0]])
    return _state(row[1:], run)


def bindings_now(run: Run) -> dict[int, BindingNow]:
    """Every binding of the run with its connection as it is now, by connection id (a
    connection the run has no binding to is absent)."""
    with statement_cursor() as cursor:
        cursor.execute(
            _all_bindings_statement(db.vendor),
            [run.org_id, _runs.prepared("id", run.pk), KEYRING, _bindings.prepared("run", run.pk)],
        )
        states = [_state(row, run) for row in cursor.fetchall()]
    return {state.binding.connection_id: state for state in states}
