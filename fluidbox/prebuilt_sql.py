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

from django.db import connection


class ModelTable:
    """One model's table: its concrete fields as SQL columns, rows back as instances, and
    multi-row INSERTs that fill in the new primary keys."""

    def __init__(self, model, *, leave_out=frozenset()) -> None:
        self.model = model
        self.fields = tuple(f for f in model._meta.concrete_fields if f.name not in leave_out)
        self._insert_fields = tuple(f for f in self.fields if f is not model._meta.auto_field)
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
        converted = []
        for value, (column, converters) in zip(values, self._converters_for(alias), strict=True):
            for convert in converters:
                value = convert(value, column, connection)
            converted.append(value)
        return self.model.from_db(
            connection.alias, [field.attname for field in self.fields], converted
        )

    def _converters_for(self, alias: str) -> tuple:
        key = (connection.vendor, alias)
        converters = self._converters.get(key)
        if converters is None:
            built = []
            for field in self.fields:
                column = field.get_col(alias)
                built.append(
                    (
                        column,
                        tuple(connection.ops.get_db_converters(column))
                        + tuple(column.get_db_converters(connection)),
                    )
                )
            with self._lock:
                converters = self._converters.setdefault(key, tuple(built))
        return converters

    # --- writing ------------------------------------------------------------------------

    def insert_statement(self, count: int) -> str:
        """INSERT of `count` rows, returning their primary keys in the order given."""
        quote = connection.ops.quote_name
        columns = ", ".join(quote(field.column) for field in self._insert_fields)
        row = "(" + ", ".join(["%s"] * len(self._insert_fields)) + ")"
        values = ", ".join([row] * count)
        return f"INSERT INTO {self.name} ({columns}) VALUES {values} RETURNING {self.pk}"

    def insert_params(self, instances) -> list:
        return [
            field.get_db_prep_save(field.pre_save(instance, add=True), connection)
            for instance in instances
            for field in self._insert_fields
        ]

    def adopt(self, instances, pks) -> None:
        """Mark the instances as saved, with the primary keys the INSERT returned."""
        for instance, pk in zip(instances, pks, strict=True):
            instance.pk = pk
            instance._state.adding = False
            instance._state.db = connection.alias

    def insert(self, cursor, instances) -> None:
        cursor.execute(self.insert_statement(len(instances)), self.insert_params(instances))
        self.adopt(instances, [pk for (pk,) in cursor.fetchall()])
