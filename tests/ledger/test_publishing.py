"""Checkpoints pushed to a witness over HTTPS (c2sp.org/tlog-witness), with retries: the
witness checks each one against the last it cosigned, so a copy lives outside fluidbox."""

from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from ledger.log_models import Publication, PublicationStatus
from ledger.publishing import publications_attempt_due, witnesses
from tests.ledger.support import checkpoint_now, gate_traffic, vkey
from tests.ledger.witness import Witness

pytestmark = pytest.mark.django_db


@pytest.fixture
def witness(org, make_run, tmp_path, settings):
    make_run()  # the log needs a key to hand the witness
    with Witness(tmp_path, vkey(org)) as running:
        settings.FLUIDBOX_LEDGER_WITNESSES = [f"{running.url} {running.vkey}"]
        settings.FLUIDBOX_LEDGER_WITNESS_CA_FILE = str(running.cert)
        yield running


def test_each_checkpoint_reaches_the_witness_consistent_with_the_last(org, make_run, witness):
    run_id, runner = make_run()
    first = checkpoint_now(org)
    assert publications_attempt_due() == 1
    gate_traffic(runner, run_id, 5)
    second = checkpoint_now(org)
    assert publications_attempt_due() == 1
    assert witness.notes == [first.note, second.note]
    assert (witness.size, witness.root) == (second.tree_size, bytes(second.root))
    published = Publication.objects.get(checkpoint=second)
    assert published.status == PublicationStatus.PUBLISHED
    assert published.old_size == first.tree_size
    assert published.cosignature.startswith("\u2014 witness.test/w1 ")


def test_a_failing_witness_is_retried_with_backoff(org, make_run, witness):
    make_run()
    witness.failures_to_fake = 1
    checkpoint = checkpoint_now(org)
    assert publications_attempt_due() == 1
    publication = Publication.objects.get(checkpoint=checkpoint)
    assert (publication.status, publication.attempts) == (PublicationStatus.PENDING, 1)
    assert publication.last_error.startswith("503")
    assert publications_attempt_due() == 0  # not due before the backoff
    assert publications_attempt_due(timezone.now() + timedelta(seconds=6)) == 1
    publication.refresh_from_db()
    assert publication.status == PublicationStatus.PUBLISHED
    assert witness.notes == [checkpoint.note]


def test_a_witness_that_forgot_the_log_gets_the_whole_history_proved_again(org, make_run, witness):
    run_id, runner = make_run()
    checkpoint_now(org)
    publications_attempt_due()
    witness.size, witness.root = 0, __import__("hashlib").sha256(b"").digest()  # a fresh one
    gate_traffic(runner, run_id, 2)
    latest = checkpoint_now(org)
    publications_attempt_due()
    # It answered 409 with its size (0); the retry sent a proof from there.
    publication = Publication.objects.get(checkpoint=latest)
    assert publication.status == PublicationStatus.PUBLISHED
    assert publication.old_size == 0
    assert witness.size == latest.tree_size


def test_a_newer_checkpoint_supersedes_an_unpublished_one(org, make_run, witness):
    run_id, runner = make_run()
    witness.failures_to_fake = 1
    first = checkpoint_now(org)
    publications_attempt_due()
    gate_traffic(runner, run_id, 1)
    second = checkpoint_now(org)
    assert Publication.objects.get(checkpoint=first).status == PublicationStatus.SUPERSEDED
    publications_attempt_due()
    assert witness.notes == [second.note]


def test_only_https_endpoints_are_accepted(settings):
    settings.FLUIDBOX_LEDGER_WITNESSES = ["http://witness.example/w1"]
    with pytest.raises(ImproperlyConfigured, match="not an https:// URL"):
        witnesses()
