"""Append-only in the database itself: triggers refuse UPDATE, DELETE and TRUNCATE of ledger
events, Merkle leaves and tiles, and checkpoints, whatever role or program sends them.

PostgreSQL: a trigger function raises. Ordinary triggers do not fire while a session runs
with `session_replication_role = replica`, which only a superuser may set: that is the
maintenance door (`append_only_suspended`), used by `manage.py flush` and by the tests that
play a database superuser tampering with rows. The application's role must be neither a
superuser nor the owner of the tables (an owner could drop the triggers): see the README.

SQLite has no roles. Its triggers ask `fluidbox_ledger_maintenance()`, a function fluidbox
registers on its own connections that answers "no" unless the process opened the door; any
other program (the sqlite3 shell, say) has no such function, and its write fails too.
"""

import threading
from contextlib import contextmanager

from django.db import connections

# Tables whose rows never change once written, and keys/logs whose identity never changes.
FROZEN_TABLES = ("ledger_event", "ledger_logleaf", "ledger_logtile", "ledger_checkpoint")
IDENTITY_COLUMNS = {
    "ledger_logkey": ("log_id", "name", "key_id", "public_key"),
    "ledger_orglog": ("org_id", "origin"),
}
SQLITE_FUNCTION = "fluidbox_ledger_maintenance"

_door = threading.local()  # Django connections are per thread, so this is per connection


def _maintenance_open() -> bool:
    return bool(getattr(_door, "open", False))


def register_sqlite_function(sender, connection, **kwargs) -> None:
    """`connection_created` receiver: give fluidbox's SQLite connections the door's latch."""
    if connection.vendor == "sqlite":
        connection.connection.create_function(SQLITE_FUNCTION, 0, _maintenance_open)


def _message(operation: str, table: str) -> str:
    return f"fluidbox: {operation} of {table} refused: the ledger is append-only"


def _postgresql_statements() -> list[tuple[str, str]]:
    """(trigger name, CREATE statement) for every trigger, after the shared function."""
    triggers = []
    for table in FROZEN_TABLES:
        triggers.append(
            (
                f"{table}_append_only",
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION fluidbox_ledger_refuse()",
            )
        )
    for table, columns in IDENTITY_COLUMNS.items():
        triggers.append(
            (
                f"{table}_append_only",
                f"CREATE TRIGGER {table}_append_only BEFORE DELETE OR UPDATE OF "
                f"{', '.join(columns)} ON {table} FOR EACH ROW "
                "EXECUTE FUNCTION fluidbox_ledger_refuse()",
            )
        )
    for table in (*FROZEN_TABLES, *IDENTITY_COLUMNS):
        triggers.append(
            (
                f"{table}_no_truncate",
                f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION fluidbox_ledger_refuse()",
            )
        )
    return triggers


POSTGRESQL_FUNCTION = """
CREATE OR REPLACE FUNCTION fluidbox_ledger_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'fluidbox: % of % refused: the ledger is append-only', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$
"""


def _sqlite_statements() -> list[tuple[str, str]]:
    triggers = []
    guard = f"WHEN NOT {SQLITE_FUNCTION}()"
    for table in FROZEN_TABLES:
        for operation in ("UPDATE", "DELETE"):
            name = f"{table}_no_{operation.lower()}"
            triggers.append(
                (
                    name,
                    f"CREATE TRIGGER IF NOT EXISTS {name} BEFORE {operation} ON {table} {guard} "
                    f"BEGIN SELECT RAISE(ABORT, '{_message(operation, table)}'); END",
                )
            )
    for table, columns in IDENTITY_COLUMNS.items():
        for operation, event in (
            ("UPDATE", f"UPDATE OF {', '.join(columns)}"),
            ("DELETE", "DELETE"),
        ):
            name = f"{table}_no_{operation.lower()}"
            triggers.append(
                (
                    name,
                    f"CREATE TRIGGER IF NOT EXISTS {name} BEFORE {event} ON {table} {guard} "
                    f"BEGIN SELECT RAISE(ABORT, '{_message(operation, table)}'); END",
                )
            )
    return triggers


def installed_triggers(using: str = "default") -> set[str]:
    connection = connections[using]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        return {name for (name,) in cursor.fetchall()}


def expected_triggers(vendor: str) -> set[str]:
    statements = _postgresql_statements() if vendor == "postgresql" else _sqlite_statements()
    return {name for name, _ in statements}


def install_triggers(using: str = "default") -> int:
    """Create whichever triggers are missing (idempotent); returns how many were created.

    Run by the migration and again after every `migrate`: on SQLite, a later migration that
    rebuilds one of these tables drops its triggers with the old table.
    """
    connection = connections[using]
    if connection.vendor not in ("postgresql", "sqlite"):
        return 0
    present = installed_triggers(using)
    statements = (
        _postgresql_statements() if connection.vendor == "postgresql" else _sqlite_statements()
    )
    missing = [(name, sql) for name, sql in statements if name not in present]
    if not missing:
        return 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(POSTGRESQL_FUNCTION)
        for _, sql in missing:
            cursor.execute(sql)
    return len(missing)


def install_after_migrate(sender, using="default", **kwargs) -> None:
    install_triggers(using)


class MaintenanceRefused(Exception):
    """Only a PostgreSQL superuser may suspend the append-only triggers."""


@contextmanager
def append_only_suspended(using: str = "default"):
    """Let this connection change ledger rows: PostgreSQL superusers only (the maintenance
    role), or this process's own SQLite connection. For `flush` in development and tests,
    and for tests that play an attacker holding the database."""
    connection = connections[using]
    if connection.vendor == "postgresql":
        from django.db import DatabaseError

        try:
            with connection.cursor() as cursor:
                cursor.execute("SET session_replication_role = replica")
        except DatabaseError as error:
            raise MaintenanceRefused(
                "the ledger is append-only: only a PostgreSQL superuser may suspend its "
                f"triggers ({error})"
            ) from None
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET session_replication_role")
        return
    connection.ensure_connection()
    _door.open = True
    try:
        yield
    finally:
        _door.open = False
