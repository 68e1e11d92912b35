"""The online checks (`manage.py ledger verify`, the run page's verdict, the inclusion-proof
API, the exporter) against a database superuser who edits the ledger past the append-only
triggers and then tidies up what the old checks looked at: the run's counter, its chain."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from governance.models import Role
from governance.services.orgs import api_key_create, user_create
from ledger.chain_checks import chain_verify
from ledger.log_models import LogLeaf
from ledger.models import Event, RunCounter
from tests.conftest import Api, run_body
from tests.ledger.support import (
    allow_a_denial,
    checkpoint_now,
    export,
    gate_traffic,
    run_value,
    superuser_sql,
)

EVENTS = Event._meta.db_table
LEAVES = LogLeaf._meta.db_table


@pytest.fixture(autouse=True)
def orphans_dropped_before_the_constraint_check(db):
    """SQLite keeps the leaves' foreign key (deferred): a leaf left without its event would
    fail the test database's constraint check at teardown, so the leaves the attacker
    orphaned go before it. (The reviewer's sqlite3 shell runs with foreign keys off.)"""
    yield
    if connection.vendor == "sqlite":
        superuser_sql(f"DELETE FROM {LEAVES} WHERE event_id NOT IN (SELECT id FROM {EVENTS})")


@pytest.fixture
def ledger(org, make_run, operator):
    """Three runs of gate traffic, the first finished, all under a signed checkpoint."""
    runs = [make_run() for _ in range(3)]
    for run_id, runner in runs:
        gate_traffic(runner, run_id, 4)
    first = runs[0][0]
    assert operator.post(f"/v1/runs/{first}/finish").status_code == 200
    checkpoint_now(org)
    return [run_id for run_id, _ in runs]


def verify(*args) -> tuple[str, str]:
    """`manage.py ledger verify …` that must fail: (the error, what it wrote to stderr)."""
    err = StringIO()
    with pytest.raises(CommandError) as failed:
        call_command("ledger", "verify", *args, stderr=err, stdout=StringIO())
    return str(failed.value), err.getvalue()


def verified(*args) -> str:
    out = StringIO()
    call_command("ledger", "verify", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def truncate(run_id, count: int) -> int:
    """Delete the run's last `count` events (their leaves stay: they are in the signed tree)
    and wind the counter back to the new last event, as the reviewer did. The new last seq."""
    last = Event.objects.filter(run_id=run_id).order_by("-seq").first().seq
    keep = Event.objects.get(run_id=run_id, seq=last - count)
    superuser_sql(
        f"DELETE FROM {EVENTS} WHERE run_id = %s AND seq > %s", [run_value(run_id), keep.seq]
    )
    RunCounter.objects.filter(run_id=run_id).update(last_seq=keep.seq, last_hash=keep.hash)
    return keep.seq


def truncate_and_rewind(run_id) -> list[int]:
    """`truncate` two events, then also rewind the sequencer's note of the run and reopen
    it: the leaves of the deleted events stay in the log, with nothing to say whose they
    were. Their indexes."""
    from governance.models import Run
    from ledger.log_models import SequencedRun

    orphans = list(
        LogLeaf.objects.filter(event__run_id=run_id)
        .order_by("-index")
        .values_list("index", flat=True)[:2]
    )
    last = truncate(run_id, 2)
    SequencedRun.objects.filter(run_id=run_id).update(seq=last)
    Run.objects.filter(pk=run_id).update(status="active", finished_at=None)
    return orphans


def test_an_untouched_ledger_passes_every_online_check(ledger, org, tmp_path):
    out = verified("--all")
    events = Event.objects.count()
    assert f"; {events} leaf/leaves hash up to their signed checkpoints" in out
    assert f"ok: 3 run(s), {events} event(s) verified" in out
    for run_id in ledger:
        assert chain_verify(run_id) == []
        assert "ok: 1 run(s)" in verified(run_id)
    export(tmp_path, run=ledger[0])
    export(tmp_path, org="acme")


def test_a_truncated_run_fails_verify_naming_the_run_and_the_orphaned_leaves(ledger):
    victim = ledger[0]
    last = truncate(victim, 2)
    error, said = verify("--all")
    assert "break(s) found in 3 run(s)" in error
    assert (
        f"run {victim}: broken at seq {last + 1}: the Merkle log holds leaves for seq "
        f"{last + 1}-{last + 2} of this run, whose events are missing" in said
    )
    assert f"run {victim}: broken at seq {last + 1}: the run is finished but its chain" in said
    assert "2 leaf/leaves whose event is missing (events deleted): leaf " in said
    for other in ledger[1:]:
        assert f"run {other}" not in said

    error, said = verify(victim)
    assert "break(s) found in 1 run(s)" in error
    assert f"run {victim}: broken at seq {last + 1}: the Merkle log holds leaves" in said
    assert "2 leaf/leaves whose event is missing" in said


def test_a_truncated_run_with_its_sequencer_row_rewound_still_fails_verify(ledger):
    """The attacker also rewinds the sequencer's note of the run and reopens it: the leaves
    of the deleted events are still in the log, with nothing to say whose they were."""

    victim = ledger[0]
    orphans = truncate_and_rewind(victim)
    for scope in ("--all", victim):
        _, said = verify(scope)
        for index in orphans:
            assert f"leaf {index} (event id " in said


def test_the_run_page_does_not_call_a_truncated_run_verified(ledger, org):
    victim = ledger[0]
    last = truncate(victim, 2)
    auditor = user_create(username="audrey", org=org, role=Role.AUDITOR, password="pw-a-123")
    client = Client()
    client.force_login(auditor)
    page = client.get(reverse("admin:governance_run_change", args=[victim])).content.decode()
    assert "verified: the hash chain is intact" not in page
    assert f"broken at seq {last + 1}" in page
    untouched = reverse("admin:governance_run_change", args=[ledger[1]])
    assert "verified: the hash chain is intact" in client.get(untouched).content.decode()


def test_the_export_of_a_truncated_run_or_its_org_is_refused(ledger, tmp_path):
    truncate(ledger[0], 2)
    for scope in ({"run": ledger[0]}, {"run": ledger[1]}, {"org": "acme"}):
        with pytest.raises(CommandError, match="2 leaf/leaves under the checkpoint of size"):
            export(tmp_path, **scope)


def test_an_edited_event_with_its_chain_recomputed_fails_verify_at_that_seq(ledger):
    victim = ledger[1]
    edited = allow_a_denial(victim)
    assert Event.objects.get(pk=edited.pk).data["decision"] == "allow"
    for scope in ("--all", victim):
        _, said = verify(scope)
        assert (
            f"run {victim}: broken at seq {edited.seq}: the event's hash is not the one its "
            "Merkle leaf" in said
        )
        assert "hash mismatch" not in said  # the chain alone is intact
        assert f"run {ledger[0]}" not in said
    assert chain_verify(victim)[0].seq == edited.seq


def test_the_inclusion_proof_of_an_edited_event_is_refused(ledger, operator):
    victim = ledger[1]
    edited = allow_a_denial(victim)
    response = operator.get(f"/v1/ledger/proofs/inclusion?run={victim}&seq={edited.seq}")
    assert response.status_code == 409, response.content
    assert response.json()["error"] == "leaf_mismatch"
    assert "no proof is given" in response.json()["detail"]
    later = operator.get(f"/v1/ledger/proofs/inclusion?run={victim}&seq={edited.seq + 1}")
    assert later.status_code == 409
    before = operator.get(f"/v1/ledger/proofs/inclusion?run={victim}&seq={edited.seq - 1}")
    assert before.status_code == 200


def test_an_event_edited_without_its_hash_gets_no_proof(ledger, operator):
    victim = ledger[2]
    superuser_sql(
        f"UPDATE {EVENTS} SET data = %s WHERE run_id = %s AND seq = 2",
        ['{"tool": "read_file", "decision": "allow"}', run_value(victim)],
    )
    response = operator.get(f"/v1/ledger/proofs/inclusion?run={victim}&seq=2")
    assert response.status_code == 409
    assert response.json()["error"] == "event_altered"


def test_an_edit_carried_into_the_leaves_breaks_the_signed_root(ledger, operator):
    """The forger rewrites the leaves too: every event matches its leaf, but the leaves no
    longer build the root the log signed."""
    from ledger.verify.events import event_leaf_hash

    victim = ledger[1]
    edited = allow_a_denial(victim)
    for event in Event.objects.filter(run_id=victim, seq__gte=edited.seq):
        superuser_sql(
            f"UPDATE {LEAVES} SET hash = %s WHERE event_id = %s",
            [event_leaf_hash(event.hash), event.pk],
        )
    _, said = verify("--all")
    assert "the stored leaves do not hash up to the root of the signed checkpoint" in said
    _, said = verify(victim)
    assert f"run {victim}: broken at seq {edited.seq}: leaf " in said
    assert "is not in the signed checkpoint of size" in said
    response = operator.get(f"/v1/ledger/proofs/inclusion?run={victim}&seq={edited.seq}")
    assert response.status_code == 409
    assert response.json()["error"] == "proof_mismatch"


def test_a_deleted_leaf_in_the_middle_of_a_run_is_named(ledger):
    victim = ledger[2]
    event = Event.objects.get(run_id=victim, seq=3)
    superuser_sql(f"DELETE FROM {LEAVES} WHERE event_id = %s", [event.pk])
    _, said = verify(victim)
    assert f"run {victim}: broken at seq 3: no Merkle leaf, yet seq 4 after it has one" in said
    _, said = verify("--all")
    assert "leaves jump from" in said


def test_verify_all_sends_as_many_queries_for_more_runs_and_events(ledger, org, make_run):
    with CaptureQueriesContext(connection) as few:
        verified("--all")
    for _ in range(4):
        run_id, runner = make_run()
        gate_traffic(runner, run_id, 3)
    checkpoint_now(org)
    with CaptureQueriesContext(connection) as more:
        verified("--all")
    assert len(more.captured_queries) == len(few.captured_queries)


def run_page(user, run_id) -> str:
    client = Client()
    client.force_login(user)
    return client.get(reverse("admin:governance_run_change", args=[run_id])).content.decode()


def scraped_ledger_check() -> dict[str, float]:
    from django.test import override_settings

    with override_settings(FLUIDBOX_METRICS_TOKEN="t0ken-for-test"):
        text = Api("t0ken-for-test").get("/metrics").content.decode()
    return {
        line.split()[0]: float(line.split()[1])
        for line in text.splitlines()
        if line.startswith("fluidbox_ledger_check_")
    }


def test_the_worker_s_ledger_check_tells_the_run_page_what_one_run_s_check_cannot(
    ledger, org, other_org, make_run
):
    """The reviewer's attack: truncate a run, rewind the sequencer's note of it and reopen it.
    The run's own chain then checks out, and the orphaned leaves no longer say whose they
    were; only a search of the whole log finds them. The worker's check does that search, and
    the run page and /metrics say what it found."""
    from ledger.tasks import ledger_check_run

    auditor = user_create(username="audrey", org=org, role=Role.AUDITOR, password="pw-a-123")
    victim = ledger[0]
    assert "the whole ledger has not been checked yet" in run_page(auditor, victim)
    assert scraped_ledger_check() == {
        "fluidbox_ledger_check_problems": 0.0,
        "fluidbox_ledger_check_timestamp_seconds": 0.0,
    }

    assert ledger_check_run() == 0
    page = run_page(auditor, victim)
    assert "✔ the organization&#x27;s ledger was intact when checked at " in page
    checked_at = scraped_ledger_check()["fluidbox_ledger_check_timestamp_seconds"]
    assert checked_at > 0

    orphans = truncate_and_rewind(victim)
    assert chain_verify(victim) == []  # the run alone checks out

    assert ledger_check_run() == 1
    page = run_page(auditor, victim)
    assert "verified: the hash chain is intact" in page  # this run's own chain
    assert "the organization&#x27;s ledger was intact" not in page
    assert "✖ the check of the whole ledger at " in page
    for index in orphans:
        assert f"leaf {index} (event id " in page
    assert scraped_ledger_check()["fluidbox_ledger_check_problems"] == 1.0
    assert scraped_ledger_check()["fluidbox_ledger_check_timestamp_seconds"] >= checked_at

    # Another organization's auditor sees that its own ledger is intact, and nothing of
    # the other one's problems.
    other_run = Api(api_key_create(org=other_org, name="ci").plaintext).post("/v1/runs", run_body())
    assert other_run.status_code == 201
    stranger = user_create(username="sam", org=other_org, role=Role.AUDITOR, password="pw-s-123")
    assert ledger_check_run() == 1
    page = run_page(stranger, other_run.json()["id"])
    assert "✔ the organization&#x27;s ledger was intact when checked at " in page
    assert "event id" not in page and "acme" not in page


def test_a_member_s_run_page_names_no_other_run_the_ledger_check_found_broken(
    ledger, org, make_run
):
    """A member sees the runs they invoked, not the rest of the organization: the whole
    ledger's check tells them how many problems lie elsewhere, never which runs hold them.
    Their own run's problems, and an auditor's view of every run's, stay named."""
    from ledger.tasks import ledger_check_run

    member = user_create(username="mia", org=org, role=Role.MEMBER, password="pw-m-123")
    auditor = user_create(username="audrey", org=org, role=Role.AUDITOR, password="pw-a-123")
    own, runner = make_run(invoked_by="mia")
    gate_traffic(runner, own, 4)
    checkpoint_now(org)
    victim = ledger[1]
    allow_a_denial(victim)

    elsewhere = ledger_check_run()
    assert elsewhere >= 1
    page = run_page(member, own)
    assert "verified: the hash chain is intact" in page  # the member's own chain
    assert f"{elsewhere} problem(s) outside this run: ask an auditor of the organization" in page
    assert victim not in page
    for other in ledger:
        assert other not in page
    assert f"run {victim}: broken at seq " in run_page(auditor, own)

    edited = allow_a_denial(own)
    assert ledger_check_run() > elsewhere
    page = run_page(member, own)
    assert f"run {own}: broken at seq {edited.seq}" in page
    assert f"{elsewhere} problem(s) outside this run" in page
    assert victim not in page


def test_a_running_check_is_not_doubled_by_the_next_one_due(ledger):
    from datetime import timedelta

    from django.utils import timezone

    from ledger.log_models import LedgerCheck
    from ledger.tasks import ledger_check_run

    running = LedgerCheck.objects.create(started_at=timezone.now(), by="worker")
    assert ledger_check_run() is None
    assert LedgerCheck.objects.count() == 1
    # `manage.py ledger verify --all` checks (and records) whatever the worker is doing.
    assert "ok: 3 run(s)" in verified("--all")
    assert LedgerCheck.objects.exclude(pk=running.pk).get().by == "command"
    # A check that died (no finish within its period) holds nothing back.
    LedgerCheck.objects.filter(pk=running.pk).update(
        started_at=timezone.now() - timedelta(minutes=61)
    )
    assert ledger_check_run() == 0
    assert LedgerCheck.objects.filter(by="worker").exclude(finished_at=None).count() == 1


def test_the_worker_schedules_the_check_every_configured_period(db, settings):
    from django_q.models import Schedule

    from governance.tasks import LEDGER_CHECK, ensure_schedules

    settings.FLUIDBOX_LEDGER_CHECK_MINUTES = 30
    ensure_schedules()
    scheduled = Schedule.objects.get(name=LEDGER_CHECK)
    assert (scheduled.func, scheduled.minutes) == ("ledger.tasks.ledger_check_run", 30)
    assert scheduled.kwargs == "q_options={'timeout': 1800}"
    settings.FLUIDBOX_LEDGER_CHECK_MINUTES = 0
    ensure_schedules()
    assert not Schedule.objects.filter(name=LEDGER_CHECK).exists()


def test_a_key_row_added_past_fluidbox_signs_nothing_it_trusts_or_hands_out(ledger, org, operator):
    """A database superuser cuts a run's tail, adds a signing key of their own under the
    log's name and signs the shorter tree with it (support.forger_key, as in
    test_tampering). Offline, the auditor's --public-key catches that; online, the keys in
    the database used to be taken on trust, and the keys API handed the forger's key to
    the auditors who fetch --public-key from it."""
    from ledger.log_models import Checkpoint
    from ledger.sequencer import log_for_org
    from tests.ledger.support import delete_checkpoints, forge_checkpoint, forger_key

    log = log_for_org(org)
    real_keys = operator.get("/v1/ledger/keys").json()["keys"]
    victim = ledger[0]
    last = Event.objects.filter(run_id=victim).order_by("-seq").first()
    superuser_sql(f"DELETE FROM {LEAVES} WHERE event_id = %s", [last.pk])
    superuser_sql(f"DELETE FROM {EVENTS} WHERE id = %s", [last.pk])
    delete_checkpoints(log)
    size = LogLeaf.objects.filter(log=log).count()
    key, private = forger_key(log)
    forge_checkpoint(log, size, key, private)
    assert Checkpoint.objects.filter(log=log).count() == 1

    _, said = verify("--all")
    assert f"the key {key} of {log.origin} was not made by this vault's fluidbox" in said
    assert f"the checkpoint of size {size} does not verify" in said
    assert operator.get("/v1/ledger/keys").json()["keys"] == real_keys
    err = StringIO()
    call_command("ledger", "public-key", "--org", "acme", "--all", stdout=StringIO(), stderr=err)
    assert f"left out: the key {key} of {log.origin}" in err.getvalue()

    # The newest unretired key is the log's current one: it is neither handed out nor used.
    refused = operator.get("/v1/ledger/public-key")
    assert refused.status_code == 409 and refused.json()["error"] == "key_untrusted"
    assert "was not made by this vault" in refused.json()["detail"]
    with pytest.raises(CommandError, match="was not made by this vault"):
        call_command("ledger", "checkpoint", "--org", "acme", stdout=StringIO())


def test_keys_made_before_vouching_and_a_vault_rotation_keep_their_trust(ledger, org, operator):
    """An upgrade: a key made before keys were vouched for is trusted when its sealed
    private half is its own, and vouched for from then on; a retired one whose private half
    is wiped cannot be told from a forgery. A vault rotation re-seals the vouch too."""
    from governance.vault import vault_rotate
    from ledger.checkpoints import key_rotate, trusted_keys
    from ledger.log_models import LogKey
    from ledger.sequencer import log_for_org

    log = log_for_org(org)
    current = LogKey.objects.get(log=log)
    LogKey.objects.filter(pk=current.pk).update(vouch="")
    assert trusted_keys(log) == ([current], [])
    assert LogKey.objects.get(pk=current.pk).vouch  # vouched for now

    assert vault_rotate() >= 2
    assert "ok: 3 run(s)" in verified("--all")

    newer = key_rotate(log=log)
    LogKey.objects.filter(pk=current.pk).update(vouch="")  # retired: its private half is gone
    trusted, untrusted = trusted_keys(log)
    assert [k.pk for k in trusted] == [newer.pk]
    assert untrusted and f"the key {current} of {log.origin}" in untrusted[0]
