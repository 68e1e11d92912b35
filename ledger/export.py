"""`manage.py ledger export`: a self-contained bundle an auditor verifies offline with
`python -m ledger.verify` (format: `ledger.verify.bundle`).

An organization's bundle holds every leaf up to its latest checkpoint, so the verifier
rebuilds the whole tree; a run's bundle holds that run's events with an inclusion path
each. Both hold every checkpoint and the consistency proofs between them.
"""

import base64
import json
from dataclasses import dataclass
from typing import TextIO

from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from ledger.checkpoints import vkey_of
from ledger.log_models import Checkpoint, LogKey, LogLeaf, OrgLog
from ledger.models import Event
from ledger.tree import TreeReader, TreeStorageError
from ledger.verify.bundle import FORMAT

MAX_NAMED = 20


class ExportError(Exception):
    """Nothing to export yet (no checkpoint covers the events asked for), or the stored log
    has lost events."""


@dataclass
class Exported:
    events: int
    tree_size: int
    uncovered: int  # events not yet under a checkpoint, left out


def _b64(hashes: list[bytes]) -> list[str]:
    return [base64.b64encode(h).decode("ascii") for h in hashes]


def _write(out: TextIO, record: dict) -> None:
    out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")


def _event_record(event: Event, leaf: int, run_id: str) -> dict:
    return {
        "record": "event",
        "leaf": leaf,
        "run": run_id,
        "seq": event.seq,
        "type": event.type,
        "at": event.at.isoformat(),
        "data": event.data,
        "prev_hash": event.prev_hash,
        "hash": event.hash,
    }


def _refuse_orphaned_leaves(log: OrgLog, size: int) -> None:
    """A leaf whose event is gone (deleted past the append-only triggers) would silently
    drop out of the bundle, and a run's bundle would still verify: refuse, naming them."""
    orphaned = LogLeaf.objects.filter(log=log, index__lt=size).filter(
        ~Exists(Event.objects.filter(pk=OuterRef("event_id")))
    )
    named = list(orphaned.order_by("index").values_list("index", "event_id")[:MAX_NAMED])
    if not named:
        return
    total = orphaned.count() if len(named) == MAX_NAMED else len(named)
    listed = ", ".join(f"leaf {index} (event id {event_id})" for index, event_id in named)
    more = f" and {total - len(named)} more" if total > len(named) else ""
    raise ExportError(
        f"{log.origin}: {total} leaf/leaves under the checkpoint of size {size} have no "
        f"event: {listed}{more}. The events were deleted from the database; a bundle "
        "would leave them out. `manage.py ledger verify --all` checks the whole ledger."
    )


def bundle_write(*, log: OrgLog, out: TextIO, run=None) -> Exported:
    checkpoints = list(Checkpoint.objects.filter(log=log).order_by("tree_size"))
    if not checkpoints:
        raise ExportError(f"{log.origin} has no signed checkpoint yet")
    final = checkpoints[-1]
    _refuse_orphaned_leaves(log, final.tree_size)
    _write(
        out,
        {
            "record": "bundle",
            "format": FORMAT,
            "origin": log.origin,
            "scope": "run" if run is not None else "org",
            "org": log.org.slug,
            "run": str(run.pk) if run is not None else None,
            "tree_size": final.tree_size,
            "exported_at": timezone.now().isoformat(),
        },
    )
    for key in LogKey.objects.filter(log=log).order_by("pk"):
        _write(
            out,
            {
                "record": "key",
                "vkey": vkey_of(key),
                "created_at": key.created_at.isoformat(),
                "retired_at": key.retired_at.isoformat() if key.retired_at else None,
            },
        )
    # From storage only, never this process's tile cache: the bundle shows the auditor what
    # the database holds now.
    tree = TreeReader(log, final.tree_size, cache=None)
    previous = None
    for checkpoint in checkpoints:
        if previous is not None:
            record = {"record": "consistency", "from": previous.tree_size}
            record["to"] = checkpoint.tree_size
            try:
                proof = TreeReader(log, checkpoint.tree_size, cache=None).consistency(
                    previous.tree_size
                )
                record["path"] = _b64(proof)
            except TreeStorageError as error:
                # Exported anyway: the verifier says what is wrong, naming the record.
                record["path"], record["unavailable"] = None, str(error)
            _write(out, record)
        _write(out, {"record": "checkpoint", "note": checkpoint.note})
        previous = checkpoint
    leaves = LogLeaf.objects.filter(log=log, index__lt=final.tree_size)
    if run is not None:
        leaves = leaves.filter(event__run=run)
    rows = (
        leaves.order_by("index")
        .annotate(run_id=F("event__run_id"))
        .select_related("event")
        .iterator(chunk_size=2000)
    )
    count = 0
    for leaf in rows:
        record = _event_record(leaf.event, leaf.index, str(leaf.run_id))
        if run is not None:
            try:
                record["inclusion"] = _b64(tree.inclusion(leaf.index))
            except TreeStorageError as error:
                record["inclusion"], record["unavailable"] = None, str(error)
        _write(out, record)
        count += 1
    _write(out, {"record": "end", "events": count})
    scope = Event.objects.filter(run__org_id=log.org_id)
    if run is not None:
        scope = Event.objects.filter(run=run)
    return Exported(events=count, tree_size=final.tree_size, uncovered=scope.count() - count)
