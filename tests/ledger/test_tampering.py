"""An auditor's offline verifier against a database superuser who edits the ledger past the
append-only triggers: every edit is caught, and the failure names the record."""

import json

import pytest

from ledger.log_models import Checkpoint, LogLeaf, OrgLog
from ledger.models import Event
from ledger.sequencer import log_for_org
from tests.ledger.support import (
    checkpoint_now,
    delete_checkpoints,
    export,
    forge_checkpoint,
    forger_key,
    gate_traffic,
    offline_verify,
    real_private_key,
    rebuild_tree,
    rechain_run,
    run_value,
    superuser_sql,
    vkey,
)

EVENTS = Event._meta.db_table
LEAVES = LogLeaf._meta.db_table


@pytest.fixture
def history(org, make_run):
    """Three runs of gate traffic under two signed checkpoints."""
    runs = [make_run() for _ in range(3)]
    for run_id, runner in runs:
        gate_traffic(runner, run_id, 4)
    first = checkpoint_now(org)
    for run_id, runner in runs:
        gate_traffic(runner, run_id, 3, prefix="later")
    second = checkpoint_now(org)
    assert first.tree_size == 3 * 9 and second.tree_size == 3 * 15
    return [run_id for run_id, _ in runs], first, second


def failure(result) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stdout == ""
    return result.stderr


def test_an_untouched_export_verifies_and_says_what_it_proved(org, history, tmp_path):
    result = offline_verify(export(tmp_path, org="acme"), vkey(org))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "OK: the whole log 127.0.0.1:8000/ledger/acme up to tree size 45: 45 events in 3 run(s) "
        "(0 finished) are exactly leaves 0-44 (root "
    )
    assert "2 checkpoint(s) signed by" in lines[0]


def test_one_runs_export_verifies_with_an_inclusion_path_per_event(org, history, tmp_path):
    """The run has not finished: every event holds, but the bundle cannot show it whole."""
    run_ids, _, _ = history
    result = offline_verify(export(tmp_path, run=run_ids[1]), vkey(org))
    assert result.returncode == 3, result.stderr
    assert result.stdout.startswith(
        f"INCOMPLETE: run {run_ids[1]}: its events seq 1-15 are included in the tree of size 45"
    )
    assert "no run.finished event is shown" in result.stdout


def test_the_portals_export_given_to_the_verifier_says_which_export_to_use(
    org, history, admin_user, client, tmp_path
):
    """A newcomer fed the timeline's 'export JSON Lines' to the verifier and read only "not a
    bundle record"."""
    run_ids, _, _ = history
    client.force_login(admin_user)
    portal = client.get(f"/admin/governance/run/{run_ids[0]}/export.jsonl")
    assert portal.status_code == 200
    events = tmp_path / "portal-export.jsonl"
    events.write_bytes(b"".join(portal.streaming_content))
    stderr = failure(offline_verify(events, vkey(org)))
    assert "record 1" in stderr
    assert "manage.py ledger export" in stderr


def test_one_events_data_changed_is_named(org, history, tmp_path):
    run_ids, _, _ = history
    superuser_sql(
        f"UPDATE {EVENTS} SET data = %s WHERE run_id = %s AND seq = 4",
        ['{"tool": "read_file", "decision": "allow"}', run_value(run_ids[1])],
    )
    message = failure(offline_verify(export(tmp_path, org="acme"), vkey(org)))
    assert f"(event run {run_ids[1]} seq 4, leaf " in message
    assert "does not hash to its hash: altered" in message


def test_a_changed_event_with_its_chain_recomputed_still_breaks_the_signed_root(
    org, history, tmp_path
):
    run_ids, first, _ = history
    superuser_sql(
        f"UPDATE {EVENTS} SET data = %s WHERE run_id = %s AND seq = 3",
        ['{"tool": "read_file", "decision": "allow"}', run_value(run_ids[0])],
    )
    rechain_run(run_ids[0])  # `ledger verify` passes again: the chain alone cannot tell
    message = failure(offline_verify(export(tmp_path, org="acme"), vkey(org)))
    assert f"(checkpoint of tree size {first.tree_size})" in message
    assert "do not build the signed root" in message


def test_one_event_deleted_is_named(org, history, tmp_path):
    run_ids, _, _ = history
    victim = Event.objects.get(run_id=run_ids[2], seq=5)
    leaf = LogLeaf.objects.get(event=victim).index
    superuser_sql(f"DELETE FROM {LEAVES} WHERE event_id = %s", [victim.pk])
    superuser_sql(f"DELETE FROM {EVENTS} WHERE id = %s", [victim.pk])
    message = failure(offline_verify(export(tmp_path, org="acme"), vkey(org)))
    assert f"leaves jump from {leaf - 1} to {leaf + 1}: a leaf is missing" in message


def test_one_event_deleted_and_the_leaves_renumbered_is_named(org, history, tmp_path):
    run_ids, _, _ = history
    victim = Event.objects.get(run_id=run_ids[2], seq=5)
    leaf = LogLeaf.objects.get(event=victim).index
    superuser_sql(f"DELETE FROM {LEAVES} WHERE event_id = %s", [victim.pk])
    superuser_sql(f"DELETE FROM {EVENTS} WHERE id = %s", [victim.pk])
    for index in range(leaf + 1, OrgLog.objects.get().size):
        superuser_sql(f'UPDATE {LEAVES} SET "index" = %s WHERE "index" = %s', [index - 1, index])
    message = failure(offline_verify(export(tmp_path, org="acme"), vkey(org)))
    assert f"(event run {run_ids[2]} seq 6, leaf {leaf})" in message
    assert "seq 5 of this run is missing" in message


def test_two_events_of_different_runs_swapped_break_the_signed_root(org, history, tmp_path):
    run_ids, first, second = history
    a = LogLeaf.objects.get(event__run_id=run_ids[0], event__seq=1)
    b = LogLeaf.objects.get(event__run_id=run_ids[1], event__seq=1)
    # Each run's own order stays intact: only the tree can tell.
    superuser_sql(f'UPDATE {LEAVES} SET "index" = %s WHERE id = %s', [10**9, a.pk])
    superuser_sql(f'UPDATE {LEAVES} SET "index" = %s WHERE id = %s', [a.index, b.pk])
    superuser_sql(f'UPDATE {LEAVES} SET "index" = %s WHERE id = %s', [b.index, a.pk])
    message = failure(offline_verify(export(tmp_path, org="acme"), vkey(org)))
    # The proofs the exporter draws from the reordered tree no longer join the two signed
    # checkpoints; with them left out, the leaves themselves miss the first signed root.
    assert (
        f"(checkpoint of tree size {second.tree_size}): inconsistent with the checkpoint "
        f"of size {first.tree_size}"
    ) in message
    stripped = tmp_path / "without-proofs.jsonl"
    stripped.write_text(
        "".join(
            json.dumps({**json.loads(line), "path": None, "unavailable": "x"}) + "\n"
            if line.startswith('{"record":"consistency"')
            else line
            for line in (tmp_path / "bundle.jsonl").read_text().splitlines(keepends=True)
        )
    )
    message = failure(offline_verify(stripped, vkey(org)))
    assert f"(checkpoint of tree size {first.tree_size})" in message
    assert "events were changed, removed, added or reordered" in message


def test_a_cut_tail_resigned_with_another_key_is_refused(org, history, tmp_path):
    run_ids, first, second = history
    original = vkey(org)
    log = log_for_org(org)
    # Drop everything after the first checkpoint and sign the shorter tree anew.
    cut = list(
        LogLeaf.objects.filter(index__gte=first.tree_size).values_list("event_id", flat=True)
    )
    delete_checkpoints(log)
    for event_id in cut:
        superuser_sql(f"DELETE FROM {LEAVES} WHERE event_id = %s", [event_id])
        superuser_sql(f"DELETE FROM {EVENTS} WHERE id = %s", [event_id])
    OrgLog.objects.filter(pk=log.pk).update(size=first.tree_size)
    key, private = forger_key(log)
    forge_checkpoint(log, first.tree_size, key, private)
    message = failure(offline_verify(export(tmp_path, org="acme"), original))
    assert "(checkpoint):" in message
    assert f"not signed by a trusted key (signed by {log.origin}+{key.key_id:08x})" in message


def test_a_cut_tail_resigned_with_the_real_key_is_caught_by_the_published_checkpoint(
    org, history, tmp_path
):
    _, first, second = history
    published = tmp_path / "published.checkpoint"
    published.write_text(second.note)
    log = log_for_org(org)
    cut = list(
        LogLeaf.objects.filter(index__gte=first.tree_size).values_list("event_id", flat=True)
    )
    delete_checkpoints(log, above=first.tree_size)
    for event_id in cut:
        superuser_sql(f"DELETE FROM {LEAVES} WHERE event_id = %s", [event_id])
        superuser_sql(f"DELETE FROM {EVENTS} WHERE id = %s", [event_id])
    OrgLog.objects.filter(pk=log.pk).update(size=first.tree_size)
    message = failure(
        offline_verify(export(tmp_path, org="acme"), vkey(org), checkpoints=[published])
    )
    assert f"a checkpoint of size {second.tree_size} was published" in message


def _fork_first_run(org, run_ids) -> OrgLog:
    """Rewrite seq 3 of the first run, re-chain it, and rebuild the tree over it."""
    superuser_sql(
        f"UPDATE {EVENTS} SET data = %s WHERE run_id = %s AND seq = 3",
        ['{"tool": "read_file", "decision": "allow"}', run_value(run_ids[0])],
    )
    rechain_run(run_ids[0])
    return rebuild_tree(org)


def test_a_fork_signed_after_a_published_checkpoint_fails_consistency(org, history, tmp_path):
    run_ids, first, second = history
    log = log_for_org(org)
    # The published first checkpoint stays; history under it is rewritten and re-signed.
    delete_checkpoints(log, above=first.tree_size)
    log = _fork_first_run(org, run_ids)
    key, private = real_private_key(log)
    forge_checkpoint(log, second.tree_size, key, private)
    message = failure(offline_verify(export(tmp_path, org="acme"), vkey(org)))
    assert f"(checkpoint of tree size {second.tree_size}): inconsistent with" in message
    assert "history was rewritten" in message


def test_the_sequencer_itself_refuses_to_sign_a_forked_tree(org, history):
    from django.db import transaction

    from ledger.checkpoints import CheckpointRefused, checkpoint_sign
    from ledger.redaction import redact
    from ledger.sequencer import sequence
    from ledger.services import event_append

    run_ids, _, second = history
    log = _fork_first_run(org, run_ids)
    with transaction.atomic():
        event_append(run_id=run_ids[1], type="tool.requested", redacted=redact({"after": 1}))
    sequence()
    with pytest.raises(CheckpointRefused, match="does not extend the checkpoint"):
        checkpoint_sign(log=log)
    assert Checkpoint.objects.filter(log=log).count() == 2


def test_a_fully_resigned_fork_is_caught_only_by_the_published_checkpoint(org, history, tmp_path):
    run_ids, first, second = history
    published = tmp_path / "witness.checkpoint"
    published.write_text(first.note)  # what the witness holds
    log = log_for_org(org)
    delete_checkpoints(log)
    log = _fork_first_run(org, run_ids)
    key, private = real_private_key(log)
    forge_checkpoint(log, first.tree_size, key, private)
    forge_checkpoint(log, second.tree_size, key, private)
    bundle = export(tmp_path, org="acme")
    # With the signing key stolen too, the bundle is self-consistent: this is exactly why
    # checkpoints are published to witnesses.
    assert offline_verify(bundle, vkey(org)).returncode == 0
    message = failure(offline_verify(bundle, vkey(org), checkpoints=[published]))
    assert f"(checkpoint of tree size {first.tree_size}): forked history" in message


def test_the_verifier_imports_neither_django_nor_fluidbox(org, history, tmp_path):
    import subprocess
    import sys

    from tests.ledger.support import ROOT

    bundle = export(tmp_path, org="acme")
    code = (
        "import sys\n"
        "from ledger.verify.__main__ import main\n"
        f"status = main([{str(bundle)!r}, '--public-key', {vkey(org)!r}])\n"
        "loaded = sorted({name.split('.')[0] for name in sys.modules})\n"
        "assert not {'django', 'governance', 'fluidbox', 'rest_framework'} & set(loaded), loaded\n"
        "sys.exit(status)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={}, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("OK: the whole log ")
