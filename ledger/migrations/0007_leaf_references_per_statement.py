"""A leaf's log and event are checked once per statement on PostgreSQL, not row by row.

A foreign key runs one lookup (and takes one row lock) per inserted row: for the sequencer's
batches the two on `ledger_logleaf` cost more than writing the leaves themselves. They are
replaced by one AFTER INSERT trigger per statement that looks up every new leaf's event and
log and refuses the whole statement if one is missing. What a foreign key also guards, that
the referenced rows are never deleted or renumbered, the append-only triggers already do
(events and logs cannot be deleted, an event's id cannot change).

SQLite keeps its foreign keys (they are cheap there): only Django's idea of the columns
changes on it.
"""

from django.db import migrations, models

FUNCTION = """
CREATE OR REPLACE FUNCTION fluidbox_ledger_leaf_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    missing record;
BEGIN
    -- Each new leaf's event through the events' primary key; the few logs named, once each.
    SELECT n.log_id, n.event_id INTO missing FROM fluidbox_new_leaves n
    WHERE NOT EXISTS (SELECT FROM ledger_event e WHERE e.id = n.event_id)
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'fluidbox: a leaf of log % names event %, which does not exist',
            missing.log_id, missing.event_id USING ERRCODE = 'foreign_key_violation';
    END IF;
    SELECT d.log_id INTO missing FROM (SELECT DISTINCT log_id FROM fluidbox_new_leaves) d
    WHERE NOT EXISTS (SELECT FROM ledger_orglog o WHERE o.id = d.log_id)
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'fluidbox: a leaf names log %, which does not exist',
            missing.log_id USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$
"""

TRIGGER = """
CREATE TRIGGER ledger_logleaf_rows_exist AFTER INSERT ON ledger_logleaf
    REFERENCING NEW TABLE AS fluidbox_new_leaves FOR EACH STATEMENT
    EXECUTE FUNCTION fluidbox_ledger_leaf_rows()
"""

FOREIGN_KEYS = {"log_id": "ledger_orglog", "event_id": "ledger_event"}


def _foreign_keys(connection, cursor) -> dict[str, str]:
    """{column: constraint name} of the leaves' foreign keys as the database has them."""
    constraints = connection.introspection.get_constraints(cursor, "ledger_logleaf")
    return {
        spec["columns"][0]: name
        for name, spec in constraints.items()
        if spec["foreign_key"] and spec["columns"][0] in FOREIGN_KEYS
    }


def per_statement(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for name in _foreign_keys(connection, cursor).values():
            cursor.execute(f"ALTER TABLE ledger_logleaf DROP CONSTRAINT {name}")
        cursor.execute(FUNCTION)
        cursor.execute(TRIGGER)


def per_row(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER IF EXISTS ledger_logleaf_rows_exist ON ledger_logleaf")
        cursor.execute("DROP FUNCTION IF EXISTS fluidbox_ledger_leaf_rows()")
        present = _foreign_keys(connection, cursor)
        for column, table in FOREIGN_KEYS.items():
            if column not in present:
                cursor.execute(
                    f"ALTER TABLE ledger_logleaf ADD CONSTRAINT ledger_logleaf_{column}_fk "
                    f"FOREIGN KEY ({column}) REFERENCES {table} (id) "
                    "DEFERRABLE INITIALLY DEFERRED"
                )


class Migration(migrations.Migration):
    dependencies = [("ledger", "0006_binding_decided_event")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="logleaf",
                    name="log",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="+",
                        to="ledger.orglog",
                    ),
                ),
                migrations.AlterField(
                    model_name="logleaf",
                    name="event",
                    field=models.OneToOneField(
                        db_constraint=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="leaf",
                        to="ledger.event",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(per_statement, per_row)],
        )
    ]
