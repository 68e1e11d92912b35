"""The sequencer: a backlog drains pass by pass, every event gets one leaf, each run's
leaves follow its seq."""

import pytest
from django.db import transaction

from ledger import sequencer
from ledger.log_models import LogLeaf, OrgLog
from ledger.models import Event
from ledger.redaction import redact
from ledger.services import event_append

pytestmark = pytest.mark.django_db


def test_a_backlog_drains_over_bounded_passes_in_each_runs_order(org, make_run, monkeypatch):
    monkeypatch.setattr(sequencer, "BATCH", 4)
    monkeypatch.setattr(sequencer, "PASS_LIMIT", 9)
    runs = [make_run()[0] for _ in range(3)]
    for index in range(30):
        with transaction.atomic():
            event_append(
                run_id=runs[index % 3], type="tool.requested", redacted=redact({"i": index})
            )
    passes = []
    while True:
        done = sequencer.sequence()
        passes.append(done.leaves)
        if done.leaves == 0:
            break
    total = Event.objects.count()
    assert sum(passes) == total == 33
    assert max(passes) <= 9 + 3  # a pass stops at the batch that crosses the limit
    assert OrgLog.objects.get().size == total
    leaves = LogLeaf.objects.order_by("index").values_list("index", "event__run_id", "event__seq")
    assert [index for index, _, _ in leaves] == list(range(total))
    for run_id in runs:
        seqs = [seq for _, run, seq in leaves if str(run) == str(run_id)]
        assert seqs == list(range(1, 12))


def test_an_event_whose_predecessor_has_no_leaf_waits_for_it(org, make_run):
    from ledger.log_models import SequencedRun

    run_id, _ = make_run()
    sequencer.sequence()
    with transaction.atomic():
        for index in range(3):
            event_append(run_id=run_id, type="tool.requested", redacted=redact({"i": index}))
    # As if seq 2 had committed late, after the scan was past its id: its successors wait.
    SequencedRun.objects.filter(run_id=run_id).update(seq=0)
    assert sequencer.sequence().leaves == 0
    assert LogLeaf.objects.count() == 1
    SequencedRun.objects.filter(run_id=run_id).update(seq=1)
    assert sequencer.sequence().leaves == 3
    seqs = list(LogLeaf.objects.order_by("index").values_list("event__seq", flat=True))
    assert seqs == [1, 2, 3, 4]
