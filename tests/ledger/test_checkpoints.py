"""When the worker signs, and what a key rotation keeps verifiable."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from tlog_scales.signing import Vkey
from tlog_scales.tlog import Checkpoint as ScalesCheckpoint

from ledger.checkpoints import logs_due, vkey_of
from ledger.log_models import Checkpoint, LogKey
from ledger.sequencer import log_for_org
from ledger.tasks import sequencer_tick
from tests.ledger.support import checkpoint_now, export, gate_traffic, offline_verify, vkey

pytestmark = pytest.mark.django_db


def test_the_worker_signs_every_n_events_or_after_t_seconds(org, make_run, settings):
    settings.FLUIDBOX_CHECKPOINT_EVERY_EVENTS = 6
    settings.FLUIDBOX_CHECKPOINT_EVERY_SECONDS = 60
    run_id, runner = make_run()
    assert sequencer_tick()["checkpoints"] == 1  # a log's first events are signed at once
    sizes = lambda: list(Checkpoint.objects.values_list("tree_size", flat=True))  # noqa: E731
    assert sizes() == [1]
    gate_traffic(runner, run_id, 2)  # 4 events: fewer than N, sooner than T
    assert sequencer_tick()["checkpoints"] == 0
    assert logs_due(timezone.now() + timedelta(seconds=61)) == [log_for_org(org)]
    gate_traffic(runner, run_id, 1, prefix="n")  # 6 events since the last checkpoint
    assert sequencer_tick()["checkpoints"] == 1
    assert sizes() == [1, 7]
    assert sequencer_tick()["checkpoints"] == 0  # nothing new: nothing signed


def test_on_demand_from_the_command_line(org, make_run, capsys):
    make_run()
    call_command("ledger", "checkpoint", "--org", "acme")
    note = capsys.readouterr().out
    assert note == Checkpoint.objects.get().note
    call_command("ledger", "checkpoints", "--org", "acme")
    history = capsys.readouterr().out
    assert "127.0.0.1:8000/ledger/acme: 1 leaves sequenced" in history
    assert "size 1  root " in history


def test_after_a_rotation_old_checkpoints_still_verify_with_the_old_key(
    org, make_run, tmp_path, capsys
):
    run_id, runner = make_run()
    gate_traffic(runner, run_id, 2)
    old_checkpoint = checkpoint_now(org)
    old_vkey = vkey(org)
    call_command("ledger", "rotate-key", "--org", "acme")
    new_vkey = capsys.readouterr().out.strip()
    assert new_vkey != old_vkey and new_vkey == vkey(org)
    gate_traffic(runner, run_id, 2, prefix="after")
    new_checkpoint = checkpoint_now(org)
    assert new_checkpoint.key.key_id != old_checkpoint.key.key_id
    ScalesCheckpoint.from_text(old_checkpoint.note).verify(Vkey.from_string(old_vkey))
    ScalesCheckpoint.from_text(new_checkpoint.note).verify(Vkey.from_string(new_vkey))
    retired = LogKey.objects.get(key_id=old_checkpoint.key.key_id)
    assert retired.private_sealed == "" and vkey_of(retired) == old_vkey
    call_command("ledger", "public-key", "--org", "acme", "--all")
    listed = capsys.readouterr().out
    assert f"{old_vkey}  # retired" in listed and f"{new_vkey}  # current" in listed
    bundle = export(tmp_path, org="acme")
    keyring = tmp_path / "keys.txt"
    keyring.write_text(listed)  # as printed, comments and all
    both = offline_verify(bundle, str(keyring))
    assert both.returncode == 0, both.stderr
    only_old = offline_verify(bundle, old_vkey)
    assert only_old.returncode == 1
    new_label = "+".join(new_vkey.split("+", 2)[:2])
    assert f"(checkpoint): not signed by a trusted key (signed by {new_label})" in only_old.stderr


def test_the_signing_key_is_sealed_in_the_vault_and_survives_its_rotation(org, make_run):
    make_run()
    first = checkpoint_now(org)
    key = LogKey.objects.get()
    assert key.private_sealed.startswith("gAAAA")  # a Fernet token, never the raw key
    call_command("vault", "rotate")
    resealed = LogKey.objects.get()
    assert resealed.private_sealed != key.private_sealed
    make_run()
    second = checkpoint_now(org)  # still signs, with the same key
    assert second.key_id == first.key_id


def test_a_sealed_vault_pauses_signing_without_stopping_the_worker(org, make_run, settings):
    from governance import vault

    settings.FLUIDBOX_CHECKPOINT_EVERY_EVENTS = 1
    settings.FLUIDBOX_VAULT_PASSPHRASE = "correct horse"
    vault.reset_cache()
    make_run()
    assert sequencer_tick()["checkpoints"] == 1
    settings.FLUIDBOX_VAULT_PASSPHRASE = None  # restarted without the passphrase: sealed
    vault.reset_cache()
    make_run()
    sealed = sequencer_tick()
    assert (sealed["leaves"], sealed["checkpoints"]) == (1, 0)
    settings.FLUIDBOX_VAULT_PASSPHRASE = "correct horse"
    vault.reset_cache()
    assert sequencer_tick()["checkpoints"] == 1
    assert list(Checkpoint.objects.values_list("tree_size", flat=True)) == [1, 2]
