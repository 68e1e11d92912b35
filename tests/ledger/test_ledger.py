"""The ledger from the auditor's side: gapless, chained, append-only, redacted."""

import threading
import uuid

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections, transaction

from ledger.append_only import append_only_suspended
from ledger.chain_checks import chain_verify
from ledger.models import AppendOnlyError, Event
from ledger.redaction import Redacted, redact
from ledger.services import LedgerError, event_append

CANARY = "canary-7f3a9c1e-do-not-leak"


def append_many(run_id, count: int, errors: list) -> None:
    try:
        for index in range(count):
            with transaction.atomic():
                event_append(run_id=run_id, type="tool.requested", redacted=redact({"i": index}))
    except Exception as error:  # surfaced by the assertion on `errors`
        errors.append(error)
    finally:
        connections.close_all()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_eight_threads_appending_to_one_run_get_a_gapless_verified_chain(make_run):
    run_id, _ = make_run()
    errors: list = []
    threads = [threading.Thread(target=append_many, args=(run_id, 200, errors)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    seqs = list(Event.objects.filter(run_id=run_id).order_by("seq").values_list("seq", flat=True))
    # seq 1 is run.created; the 1,600 appends follow it without a gap or a duplicate.
    assert seqs == list(range(1, 1602))
    assert chain_verify(run_id) == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_fifty_runs_appended_at_once_each_keep_their_own_gapless_chain(make_run):
    run_ids = [make_run()[0] for _ in range(50)]
    errors: list = []
    threads = [
        threading.Thread(target=append_many, args=(run_id, 20, errors)) for run_id in run_ids
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for run_id in run_ids:
        seqs = list(Event.objects.filter(run_id=run_id).values_list("seq", flat=True))
        assert sorted(seqs) == list(range(1, 22))
        assert chain_verify(run_id) == []


@pytest.mark.django_db(transaction=True)
def test_a_row_changed_by_raw_sql_makes_verify_fail_and_name_the_seq(make_run, capsys):
    run_id, _ = make_run()
    with transaction.atomic():
        for index in range(5):
            event_append(run_id=run_id, type="tool.requested", redacted=redact({"i": index}))
    call_command("ledger", "verify", run_id)
    table = Event._meta.db_table
    # As the database superuser, past the append-only triggers.
    with append_only_suspended(), connection.cursor() as cursor:
        run_value = uuid.UUID(run_id).hex if connection.vendor == "sqlite" else run_id
        cursor.execute(
            f"UPDATE {table} SET data = %s WHERE run_id = %s AND seq = 4",
            ['{"i": 999}', run_value],
        )
    with pytest.raises(CommandError):
        call_command("ledger", "verify", run_id)
    assert "broken at seq 4" in capsys.readouterr().err


@pytest.mark.django_db(transaction=True)
def test_a_deleted_row_is_reported_as_a_gap(make_run, capsys):
    run_id, _ = make_run()
    with transaction.atomic():
        for index in range(4):
            event_append(run_id=run_id, type="tool.requested", redacted=redact({"i": index}))
    run_value = uuid.UUID(run_id).hex if connection.vendor == "sqlite" else run_id
    with append_only_suspended(), connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {Event._meta.db_table} WHERE run_id = %s AND seq = 3", [run_value]
        )
    with pytest.raises(CommandError):
        call_command("ledger", "verify", "--all")
    assert "broken at seq 3" in capsys.readouterr().err


@pytest.mark.django_db
def test_event_append_refuses_a_plain_dict(make_run):
    run_id, _ = make_run()
    with transaction.atomic(), pytest.raises(LedgerError):
        event_append(run_id=run_id, type="tool.requested", redacted={"secret": "x"})


def test_nobody_but_the_redactor_can_build_a_redacted_envelope():
    with pytest.raises(TypeError):
        Redacted({"anything": 1})


@pytest.mark.django_db
def test_a_canary_passed_through_the_redactor_never_reaches_the_stored_row(make_run):
    run_id, _ = make_run()
    from ledger.redaction import register_secret

    register_secret(CANARY)
    with transaction.atomic():
        event = event_append(
            run_id=run_id,
            type="tool.requested",
            redacted=redact(
                {
                    "password": "hunter2-not-a-canary",
                    "headers": {"Authorization": f"Bearer {CANARY}"},
                    "note": f"the value {CANARY} was mentioned",
                    "nested": [{"api_key": "k-123"}, {"text": CANARY}],
                }
            ),
        )
    stored = Event.objects.get(pk=event.pk)
    raw = str(stored.data)
    assert CANARY not in raw
    assert "hunter2" not in raw
    assert "k-123" not in raw
    assert stored.data["password"] == "[redacted]"


@pytest.mark.django_db
def test_a_text_recorded_clean_is_masked_once_the_vault_has_handled_it(make_run):
    # The redactor remembers short texts that hold no secret word; a value the vault
    # handles afterwards must still be masked in them, in the next event and every one after.
    run_id, _ = make_run()
    from ledger.redaction import register_secret

    value = f"run_command:deploy {uuid.uuid4().hex}"
    with transaction.atomic():
        before = event_append(
            run_id=run_id, type="tool.requested", redacted=redact({"subject": value})
        )
    assert Event.objects.get(pk=before.pk).data["subject"] == value

    secret = value.split()[1]
    register_secret(secret)
    with transaction.atomic():
        after = event_append(
            run_id=run_id,
            type="tool.decision",
            redacted=redact({"subject": value, "segments": [{"subject": value}]}),
        )
    stored = Event.objects.get(pk=after.pk).data
    assert secret not in str(stored)
    assert stored["subject"] == stored["segments"][0]["subject"] == "run_command:deploy [redacted]"


@pytest.mark.django_db
def test_events_cannot_be_updated_or_deleted_through_the_orm(make_run):
    run_id, _ = make_run()
    event = Event.objects.filter(run_id=run_id).first()
    event.type = "run.finished"
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        event.delete()
    with pytest.raises(AppendOnlyError):
        Event.objects.filter(run_id=run_id).update(type="run.finished")
    with pytest.raises(AppendOnlyError):
        Event.objects.filter(run_id=run_id).delete()
    assert Event.objects.get(pk=event.pk).type == "run.created"


@pytest.mark.django_db
def test_catch_up_returns_events_strictly_after_n_in_order(make_run):
    run_id, runner = make_run()
    with transaction.atomic():
        for index in range(9):
            event_append(run_id=run_id, type="tool.requested", redacted=redact({"i": index}))
    response = runner.get(f"/v1/runs/{run_id}/events?after=3&limit=4")
    assert response.status_code == 200
    body = response.json()
    assert [event["seq"] for event in body["events"]] == [4, 5, 6, 7]
    assert body["next_after"] == 7
    rest = runner.get(f"/v1/runs/{run_id}/events?after=7").json()
    assert [event["seq"] for event in rest["events"]] == [8, 9, 10]


@pytest.mark.django_db
def test_the_stream_resumed_with_last_event_id_5_starts_at_6(make_run):
    run_id, runner = make_run()
    with transaction.atomic():
        for index in range(7):
            event_append(run_id=run_id, type="tool.requested", redacted=redact({"i": index}))
    response = runner.client.get(
        f"/v1/runs/{run_id}/events/stream?max_seconds=1",
        HTTP_LAST_EVENT_ID="5",
        HTTP_ACCEPT="text/event-stream",
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    text = b"".join(response.streaming_content).decode()
    ids = [int(line[4:]) for line in text.splitlines() if line.startswith("id: ")]
    assert ids == [6, 7, 8]


def verify_all_output(capsys) -> str:
    call_command("ledger", "verify", "--all")
    return capsys.readouterr().out.strip()


@pytest.mark.django_db(transaction=True)
def test_verify_all_counts_runs_not_events(make_run, capsys):
    # It once printed "ok: 82 run(s) verified" for 4 runs: the count must be the runs'.
    run_ids = [make_run()[0] for _ in range(4)]
    for number, run_id in enumerate(run_ids):
        with transaction.atomic():
            for index in range(20 + number * 7):
                event_append(run_id=run_id, type="tool.requested", redacted=redact({"i": index}))
    events = Event.objects.count()
    assert events == sum(1 + 20 + n * 7 for n in range(4))  # run.created + the appends
    # Nothing is under a signed checkpoint yet: no leaf to hash up to one.
    assert verify_all_output(capsys) == (
        f"ok: 4 run(s), {events} event(s) verified; 0 leaf/leaves hash up to their signed "
        "checkpoints"
    )


@pytest.mark.django_db(transaction=True)
def test_verify_all_finds_a_run_whose_events_were_all_deleted(make_run, capsys):
    kept, emptied = make_run()[0], make_run()[0]
    with transaction.atomic():
        for run_id in (kept, emptied):
            event_append(run_id=run_id, type="tool.requested", redacted=redact({"i": 1}))
    run_value = uuid.UUID(emptied).hex if connection.vendor == "sqlite" else emptied
    with append_only_suspended(), connection.cursor() as cursor:  # the attacker's door
        cursor.execute(f"DELETE FROM {Event._meta.db_table} WHERE run_id = %s", [run_value])
    with pytest.raises(CommandError, match="1 break\\(s\\) found in 2 run\\(s\\)"):
        call_command("ledger", "verify", "--all")
    assert f"run {emptied}: broken at seq 1: counter says 2 events" in capsys.readouterr().err


@pytest.mark.django_db
def test_verify_refuses_an_unknown_or_malformed_run_id(make_run):
    make_run()
    with pytest.raises(CommandError, match="no run"):
        call_command("ledger", "verify", str(uuid.uuid4()))
    with pytest.raises(CommandError, match="not a run id"):
        call_command("ledger", "verify", "not-a-uuid")


def _head(run_id) -> tuple[int, str]:
    last = Event.objects.filter(run_id=run_id).order_by("-seq").first()
    return last.seq, last.hash


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_append_at_a_head_that_moved_writes_nothing_and_one_at_the_head_chains_on(make_run):
    from governance.models import Run
    from ledger.services import Alongside, event_append_at_head

    run_id, _ = make_run()
    table = connection.ops.quote_name(Run._meta.db_table)
    rename = Alongside(f"UPDATE {table} SET agent = %s WHERE id = %s", ["renamed", run_id])
    stale = _head(run_id)
    with transaction.atomic():  # another append to the run comes between
        event_append(run_id=run_id, type="tool.requested", redacted=redact({"i": 1}))
    moved = event_append_at_head(
        run_id=run_id, type="tool.brokered", redacted=redact({"i": 2}), head=stale, alongside=rename
    )
    assert moved is None
    assert Event.objects.filter(run_id=run_id).count() == 2  # run.created, tool.requested
    assert Run.objects.get(pk=run_id).agent != "renamed"  # its alongside write did not run

    head = _head(run_id)
    appended = event_append_at_head(
        run_id=run_id, type="tool.brokered", redacted=redact({"i": 2}), head=head, alongside=rename
    )
    assert appended is not None and appended.seq == head[0] + 1
    assert appended.prev_hash == head[1]
    assert Run.objects.get(pk=run_id).agent == "renamed"
    assert list(
        Event.objects.filter(run_id=run_id).order_by("seq").values_list("type", flat=True)
    ) == [
        "run.created",
        "tool.requested",
        "tool.brokered",
    ]
    assert chain_verify(run_id) == []
    # The same head twice: the second append finds it moved (by the first) and writes nothing.
    again = event_append_at_head(
        run_id=run_id, type="tool.brokered", redacted=redact({"i": 3}), head=head
    )
    assert again is None
    assert Event.objects.filter(run_id=run_id).count() == 3
