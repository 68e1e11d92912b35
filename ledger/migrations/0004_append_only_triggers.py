"""Triggers that refuse UPDATE, DELETE and TRUNCATE of ledger rows (see ledger.append_only)."""

from django.db import migrations


def install(apps, schema_editor):
    from ledger.append_only import install_triggers

    install_triggers(schema_editor.connection.alias)


def remove(apps, schema_editor):
    from ledger.append_only import expected_triggers

    connection = schema_editor.connection
    with connection.cursor() as cursor:
        for name in expected_triggers(connection.vendor):
            if connection.vendor == "postgresql":
                table = name.rsplit("_", 2)[0]
                cursor.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
            else:
                cursor.execute(f"DROP TRIGGER IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("ledger", "0003_auditor_log")]

    operations = [migrations.RunPython(install, remove)]
