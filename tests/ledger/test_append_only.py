"""Append-only in the database: no role the application uses can change or remove a ledger
event, leaf, tile or checkpoint, whatever privileges it was granted."""

import sqlite3
import uuid

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction

from ledger.append_only import expected_triggers, installed_triggers
from ledger.log_models import Checkpoint, LogKey, LogLeaf, OrgLog
from ledger.models import Event
from tests.ledger.support import checkpoint_now

REFUSED = "the ledger is append-only"


def tampering_statements(event: Event, checkpoint: Checkpoint) -> list[tuple[str, list]]:
    events, leaves = Event._meta.db_table, LogLeaf._meta.db_table
    checkpoints, keys = Checkpoint._meta.db_table, LogKey._meta.db_table
    return [
        (f"UPDATE {events} SET data = %s WHERE id = %s", ['{"forged": true}', event.pk]),
        (f"UPDATE {events} SET seq = seq + 100 WHERE id = %s", [event.pk]),
        (f"DELETE FROM {events} WHERE id = %s", [event.pk]),
        (f"UPDATE {leaves} SET hash = hash WHERE event_id = %s", [event.pk]),
        (f"DELETE FROM {leaves} WHERE event_id = %s", [event.pk]),
        (f"UPDATE {checkpoints} SET note = %s WHERE id = %s", ["forged", checkpoint.pk]),
        (f"DELETE FROM {checkpoints} WHERE id = %s", [checkpoint.pk]),
        (f"UPDATE {keys} SET public_key = public_key WHERE id = %s", [checkpoint.key_id]),
        (f"DELETE FROM {keys} WHERE id = %s", [checkpoint.key_id]),
        (f"UPDATE {OrgLog._meta.db_table} SET origin = %s", ["elsewhere.example/log"]),
    ]


@pytest.fixture
def signed(org, make_run):
    run_id, _ = make_run()
    checkpoint = checkpoint_now(org)
    return Event.objects.get(run_id=run_id, seq=1), checkpoint


@pytest.mark.django_db
def test_every_protected_table_has_its_triggers_after_the_migrations():
    expected = expected_triggers(connection.vendor)
    assert len(expected) >= 12
    assert expected <= installed_triggers()


@pytest.mark.django_db
def test_the_applications_own_connection_cannot_change_or_remove_ledger_rows(signed):
    event, checkpoint = signed
    for sql, params in tampering_statements(event, checkpoint):
        with (
            pytest.raises(DatabaseError, match=REFUSED),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, params)
    stored = Event.objects.get(pk=event.pk)
    assert (stored.data, stored.seq, stored.hash) == (event.data, event.seq, event.hash)
    assert Checkpoint.objects.get(pk=checkpoint.pk).note == checkpoint.note


@pytest.mark.django_db
def test_retiring_a_key_and_growing_the_log_are_still_allowed(org, signed):
    from ledger.checkpoints import key_rotate
    from ledger.sequencer import log_for_org

    log = log_for_org(org)
    old = LogKey.objects.get(log=log)
    new = key_rotate(log=log)
    old.refresh_from_db()
    assert old.retired_at is not None and old.private_sealed == ""
    assert bytes(old.public_key) != bytes(new.public_key)
    OrgLog.objects.filter(pk=log.pk).update(size=log.size)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_non_superuser_application_role_is_refused_even_with_every_privilege(signed):
    event, checkpoint = signed
    role = f"fb_app_{uuid.uuid4().hex[:10]}"
    settings = connection.settings_dict
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER")
        cursor.execute(
            "GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public "
            f"TO {role}"
        )
    try:
        with psycopg.connect(
            host=settings["HOST"] or "127.0.0.1",
            port=settings["PORT"] or 5432,
            dbname=settings["NAME"],
            user=role,
            autocommit=True,
        ) as app:
            for sql, params in tampering_statements(event, checkpoint):
                with pytest.raises(psycopg.errors.InsufficientPrivilege, match=REFUSED):
                    app.execute(sql, params)
            for table in (Event, LogLeaf, Checkpoint):
                with pytest.raises(psycopg.errors.InsufficientPrivilege, match=REFUSED):
                    app.execute(f"TRUNCATE {table._meta.db_table} CASCADE")
            # Nor can it open the maintenance door or take the triggers away.
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                app.execute("SET session_replication_role = replica")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                app.execute(f"ALTER TABLE {Event._meta.db_table} DISABLE TRIGGER ALL")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                app.execute(f"DROP TRIGGER ledger_event_append_only ON {Event._meta.db_table}")
            # What it needs still works: reading, and appending.
            count = app.execute(f"SELECT count(*) FROM {Event._meta.db_table}").fetchone()[0]
            assert count == Event.objects.count()
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP OWNED BY {role}")
            cursor.execute(f"DROP ROLE {role}")
    stored = Event.objects.get(pk=event.pk)
    assert (stored.data, stored.hash) == (event.data, event.hash)


@pytest.mark.django_db(transaction=True)
def test_on_sqlite_another_program_opening_the_file_is_refused_too(signed):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite only")
    event, checkpoint = signed
    other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    try:
        for sql, params in tampering_statements(event, checkpoint):
            with pytest.raises(sqlite3.OperationalError, match="fluidbox_ledger_maintenance"):
                other.execute(sql.replace("%s", "?"), params)
    finally:
        other.close()
    assert Event.objects.get(pk=event.pk).hash == event.hash


@pytest.mark.django_db(transaction=True)
def test_a_leaf_naming_an_event_or_a_log_that_does_not_exist_is_refused(org, signed, make_run):
    """The leaves' references hold on both databases: PostgreSQL checks them once per
    statement (a trigger, migration 0007), SQLite with its foreign keys."""
    from django.db import IntegrityError
    from django.db.models import Max

    from ledger.sequencer import log_for_org

    event, _ = signed
    log = log_for_org(org)
    run_id, _ = make_run()  # its first event has no leaf yet
    unsequenced = Event.objects.get(run_id=run_id, seq=1)
    missing_event = Event.objects.aggregate(top=Max("pk"))["top"] + 1000
    missing_log = OrgLog.objects.aggregate(top=Max("pk"))["top"] + 1000
    table = LogLeaf._meta.db_table
    insert = f"INSERT INTO {table} (log_id, {connection.ops.quote_name('index')}, event_id, hash) "
    attempts = [
        # One good leaf and one naming no event, in one statement: all of it is refused.
        (
            insert + "VALUES (%s, %s, %s, %s), (%s, %s, %s, %s)",
            [log.pk, log.size, unsequenced.pk, bytes(32)]
            + [log.pk, log.size + 1, missing_event, bytes(32)],
        ),
        (insert + "VALUES (%s, %s, %s, %s)", [missing_log, 0, unsequenced.pk, bytes(32)]),
    ]
    for sql, params in attempts:
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, params)
    assert not LogLeaf.objects.filter(event=unsequenced).exists()
    assert not LogLeaf.objects.filter(event_id=missing_event).exists()
    assert LogLeaf.objects.filter(log=log).count() == log.size
    assert LogLeaf.objects.filter(event=event).exists()
