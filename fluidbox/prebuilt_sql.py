"""SQL built once from a model's metadata, for the statements every gate decision runs: the
runner's credential lookup, the tool-call insert and the ledger append.

Compiling a queryset costs more CPU than the database spends running these small
statements, and the gate runs them on every call. Columns, value converters and prepared
parameters all come from Django's own field machinery (`get_col`, `get_db_converters`,
`pre_save`, `get_db_prep_save`, `Model.from_db`), so a row read or written here is exactly
the row the ORM would read or write. Model signals are not sent; the models used here have
no receivers.
"""

import threading
from functools import cache

from django.db import DEFAULT_DB_ALIAS, connection, connections

from governance.observability import tracing_setup


def statement_cursor():
    """A cursor for the prebuilt statements: Django's cursor (same connection, transaction,
    execute wrappers and query log), over psycopg's server-side binding on PostgreSQL.

    Django's default cursor binds on the client: psycopg quotes every parameter into the
    SQL text in Python, which for the ~40 parameters of a gate decision cost more CPU than
    anything else in the database layer. Sent apart from the statement, the parameters are
    dumped by psycopg's C code instead. When the connection outlives the request (the pool,
    or `DB_CONN_MAX_AGE`), the statements are also prepared once per connection, so
    PostgreSQL parses and plans them once instead of on every call.

    With tracing on, OpenTelemetry's psycopg instrumentation has replaced Django's cursor
    class on the connection by a traced subclass; these statements then run on the same
    server-binding cursor, traced by that instrumentation's own cursor class
    (`tracing_setup.traced_cursor_class`): spans like every other statement's, at no extra
    cost to the database (Django's client-side cursor here had PostgreSQL parse and plan all
    of them again on every call, and psycopg quote ~40 parameters in Python). When anything
    else has replaced the cursor class, Django's own cursor is used. SQLite has nothing to
    gain.
    """
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor != "postgresql":
        return db.cursor()
    db.close_if_health_check_failed()
    db.ensure_connection()
    postgresql = _postgresql()
    factory = db.connection.cursor_factory
    traced = factory is not postgresql.Cursor
    if traced and not tracing_setup.traces_cursor_class(factory, postgresql.Cursor):
        return db.cursor()
    with db.wrap_database_errors:
        return db._prepare_cursor(_server_binding_cursor(db, traced=traced))


@cache
def _postgresql():
    # Imported on first use: the PostgreSQL backend imports psycopg, which SQLite never needs.
    from django.db.backends.postgresql import base

    return base


def _server_binding_cursor(db, *, traced: bool = False):
    postgresql = _postgresql()
    reused = db.pool is not None or db.settings_dict["CONN_MAX_AGE"] != 0  # None: forever
    if reused and db.connection.prepare_threshold is None:
        # Django turns psycopg's prepared statements off (None) for connection poolers that
        # cannot keep them. With a threshold no count reaches, only what is asked for
        # (prepare=True, below) is prepared: Django's own cursors bind on the client and
        # never prepare anything.
        db.connection.prepare_threshold = _ONLY_WHEN_ASKED
    factory = _preparing_cursor_class() if reused else postgresql.ServerBindingCursor
    if traced:
        factory = tracing_setup.traced_cursor_class(factory, db.connection)
    raw = factory(db.connection)
    # As Django's create_cursor: the session's time zone for timestamptz values read back.
    loader = db.connection.adapters.get_loader(postgresql.TIMESTAMPTZ_OID, postgresql.Format.TEXT)
    if db.timezone != loader.timezone:
        postgresql.register_tzloader(db.timezone, raw)
    return raw


_ONLY_WHEN_ASKED = 2**62


@cache
def _preparing_cursor_class():
    class PreparingCursor(_postgresql().ServerBindingCursor):
        """Prepares every statement it runs (psycopg keeps them per connection, at most
        `prepared_max`). Only the prebuilt statements run here: a handful of texts."""

        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(
                query, params, prepare=True if prepare is None else prepare, binary=binary
            )

    return PreparingCursor


class ModelTable:
    """One model's table: its concrete fields as SQL columns, rows back as instances, and
    multi-row INSERTs that fill in the new primary keys."""

    def __init__(self, model, *, leave_out=frozenset()) -> None:
        self.model = model
        self.fields = tuple(f for f in model._meta.concrete_fields if f.name not in leave_out)
        self._insert_fields = tuple(f for f in self.fields if f is not model._meta.auto_field)
        self._attnames = [field.attname for field in self.fields]
        self._statements: dict[tuple[str, int], str] = {}
        self._converters: dict[tuple[str, str], tuple] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return connection.ops.quote_name(self.model._meta.db_table)

    @property
    def pk(self) -> str:
        return connection.ops.quote_name(self.model._meta.pk.column)

    def column(self, field_name: str) -> str:
        return connection.ops.quote_name(self.model._meta.get_field(field_name).column)

    def prepared(self, field_name: str, value):
        return self.model._meta.get_field(field_name).get_db_prep_save(value, connection)

    # --- reading ------------------------------------------------------------------------

    def columns(self, alias: str) -> str:
        quote = connection.ops.quote_name
        return ", ".join(f"{alias}.{quote(field.column)}" for field in self.fields)

    def instance(self, values, alias: str):
        """The model instance for this table's slice of a row selected with `columns(alias)`."""
        db = connections[DEFAULT_DB_ALIAS]  # not the proxy: see insert_params
        if len(values) != len(self.fields):
            raise ValueError(f"{len(values)} values for {len(self.fields)} columns")
        converted = list(values)
        for index, column, converters in self._converters_for(db.vendor, alias):
            value = converted[index]
            for convert in converters:
                value = convert(value, column, db)
            converted[index] = value
        return self.model.from_db(DEFAULT_DB_ALIAS, self._attnames, converted)

    def _converters_for(self, vendor: str, alias: str) -> tuple:
        """(position, column, converters) of the columns that have converters at all."""
        key = (vendor, alias)
        converters = self._converters.get(key)
        if converters is None:
            built = []
            for index, field in enumerate(self.fields):
                column = field.get_col(alias)
                found = tuple(connection.ops.get_db_converters(column)) + tuple(
                    column.get_db_converters(connection)
                )
                if found:
                    built.append((index, column, found))
            with self._lock:
                converters = self._converters.setdefault(key, tuple(built))
        return converters

    # --- writing ------------------------------------------------------------------------

    def insert_statement(self, count: int) -> str:
        """INSERT of `count` rows, returning their primary keys in the order given."""
        key = (connection.vendor, count)
        statement = self._statements.get(key)
        if statement is None:
            quote = connection.ops.quote_name
            columns = ", ".join(quote(field.column) for field in self._insert_fields)
            row = "(" + ", ".join(["%s"] * len(self._insert_fields)) + ")"
            values = ", ".join([row] * count)
            statement = f"INSERT INTO {self.name} ({columns}) VALUES {values} RETURNING {self.pk}"
            self._statements[key] = statement  # the same text whichever thread wins
        return statement

    def insert_select_statement(self, count: int, source: str) -> str:
        """INSERT of `count` rows (parameters as `insert_params` gives them), written only
        where the query `source` (a CTE's name, say) yields a row, returning each new
        primary key. PostgreSQL. Parameters in a SELECT list are not typed by the columns
        they go to, so each is cast to its column's type; text for character columns, so
        that a value too long is refused, not cut."""
        key = (f"{connection.vendor}:select from {source}", count)
        statement = self._statements.get(key)
        if statement is None:
            quote = connection.ops.quote_name
            columns = ", ".join(quote(field.column) for field in self._insert_fields)
            kinds = (field.db_type(connection) for field in self._insert_fields)
            row = ", ".join(
                f"CAST(%s AS {'text' if kind.startswith('varchar') else kind})" for kind in kinds
            )
            rows = " UNION ALL ".join([f"SELECT {row} FROM {source}"] * count)
            statement = f"INSERT INTO {self.name} ({columns}) {rows} RETURNING {self.pk}"
            self._statements[key] = statement  # the same text whichever thread wins
        return statement

    def insert_params(self, instances) -> list:
        # The thread's connection itself, not the `connection` proxy: every field's
        # preparation reads several of its attributes, and each read through the proxy
        # costs a thread-local look-up.
        db = connections[DEFAULT_DB_ALIAS]
        return [
            field.get_db_prep_save(field.pre_save(instance, add=True), db)
            for instance in instances
            for field in self._insert_fields
        ]

    def adopt(self, instances, pks) -> None:
        """Mark the instances as saved, with the primary keys the INSERT returned."""
        for instance, pk in zip(instances, pks, strict=True):
            instance.pk = pk
            instance._state.adding = False
            instance._state.db = DEFAULT_DB_ALIAS  # the alias `connection` stands for

    def insert(self, cursor, instances) -> None:
        cursor.execute(self.insert_statement(len(instances)), self.insert_params(instances))
        self.adopt(instances, [pk for (pk,) in cursor.fetchall()])
