"""The stored tree: the tiles the sequencer writes pass after pass are exactly the tiles of
the tree built from scratch, on every level, and every proof drawn from them (through this
process's tile cache or straight from storage) verifies with tlog-scales, code fluidbox
did not write. The cache never hands one log's tiles to another."""

import base64

import pytest
from django.db import transaction
from tlog_scales.tlog import ConsistencyProof, InclusionProof

from governance.services.bundles import bundle_import
from governance.services.orgs import org_create
from governance.services.policies import policy_save
from governance.services.runs import run_create
from ledger import sequencer, tree
from ledger.checkpoints import checkpoint_sign
from ledger.log_models import Checkpoint, LogLeaf, LogTile
from ledger.models import Event
from ledger.redaction import redact
from ledger.sequencer import log_for_org, sequence_all
from ledger.services import events_append
from ledger.tree import TILES, TreeReader
from ledger.verify.events import event_leaf_hash
from ledger.verify.merkle import node_hash, root_of, verify_consistency, verify_inclusion
from tests.conftest import TEST_BUNDLE, TEST_POLICY

pytestmark = pytest.mark.django_db


def filler(run_id, count: int, marker: str = "filler") -> None:
    with transaction.atomic():
        events_append(
            run_id=run_id,
            events=[("tool.requested", redact({marker: i})) for i in range(count)],
        )


def stored_leaves(log) -> list[bytes]:
    rows = LogLeaf.objects.filter(log=log).order_by("index").values_list("index", "hash")
    assert [index for index, _ in rows] == list(range(len(rows)))
    return [bytes(digest) for _, digest in rows]


def tiles_from_scratch(leaves: list[bytes], width: int) -> dict:
    """Every full tile of the tree over `leaves`: {(level, index): (hashes, root)}."""
    tiles, entries, level = {}, leaves, 0
    while len(entries) >= width:
        roots = []
        for index in range(len(entries) // width):
            chunk = entries[index * width : (index + 1) * width]
            while len(chunk) > 1:
                chunk = [node_hash(chunk[i], chunk[i + 1]) for i in range(0, len(chunk), 2)]
            tiles[(level, index)] = (
                b"".join(entries[index * width : (index + 1) * width]),
                chunk[0],
            )
            roots.append(chunk[0])
        entries, level = roots, level + 1
    return tiles


@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of 4 hashes (2 levels) instead of 256, and passes of a few events: a few
    hundred leaves then fill tiles on five levels and cross tile edges inside batches."""
    monkeypatch.setattr(tree, "TILE_HEIGHT", 2)
    monkeypatch.setattr(tree, "TILE_WIDTH", 4)
    monkeypatch.setattr(sequencer, "BATCH", 7)
    monkeypatch.setattr(sequencer, "PASS_LIMIT", 23)


def test_tiles_written_pass_by_pass_are_those_of_the_tree_built_from_scratch(
    org, make_run, small_tiles, operator
):
    runs = [make_run()[0] for _ in range(3)]
    log = log_for_org(org)
    signed = []
    for count in (5, 1, 60, 13, 90):
        for run_id in runs:
            filler(run_id, count)
        sequence_all()
        log.refresh_from_db()
        signed.append(checkpoint_sign(log=log))
    leaves = stored_leaves(log)
    assert len(leaves) == Event.objects.count() == signed[-1].tree_size == 3 * (1 + 169)
    events = dict(Event.objects.values_list("pk", "hash"))
    for event_id, digest in LogLeaf.objects.values_list("event_id", "hash"):
        assert bytes(digest) == event_leaf_hash(events[event_id])

    stored = {
        (level, index): (bytes(hashes), bytes(root))
        for level, index, hashes, root in LogTile.objects.filter(log=log).values_list(
            "level", "index", "hashes", "root"
        )
    }
    expected = tiles_from_scratch(leaves, 4)
    assert stored == expected
    assert {level for level, _ in stored} == {0, 1, 2, 3}

    for position, checkpoint in enumerate(signed):
        size, root = checkpoint.tree_size, bytes(checkpoint.root)
        assert root == root_of(leaves[:size])
        cached, uncached = TreeReader(log, size), TreeReader(log, size, cache=None)
        assert cached.root() == uncached.root() == root
        for index in range(size):
            path = cached.inclusion(index)
            assert path == uncached.inclusion(index)
            verify_inclusion(leaves[index], index, size, path, root)
            InclusionProof(index, size, path).check(leaves[index], root)
        for earlier in signed[:position]:
            path = TreeReader(log, size).consistency(earlier.tree_size)
            assert path == TreeReader(log, size, cache=None).consistency(earlier.tree_size)
            verify_consistency(earlier.tree_size, size, path, bytes(earlier.root), root)
            ConsistencyProof(earlier.tree_size, size, path).check(bytes(earlier.root), root)

    # The API's proofs (the leaf read with its tile) from the same tree.
    for run_id in runs:
        for seq in (1, 2, 77, 170):
            proof = operator.get(
                "/v1/ledger/proofs/inclusion",
                data={"run": run_id, "seq": seq, "tree_size": signed[-1].tree_size},
            ).json()
            path = [base64.b64decode(h) for h in proof["inclusion_path"]]
            index = proof["leaf_index"]
            InclusionProof(index, signed[-1].tree_size, path).check(
                leaves[index], bytes(signed[-1].root)
            )


def _org_with_events(slug: str, runs: int, per_run: int, marker: str):
    org = org_create(slug=slug)
    policy_save(org=org, text=TEST_POLICY, author=None)
    bundle_import(org=org, text=TEST_BUNDLE)
    for _ in range(runs):
        run = run_create(
            org=org,
            agent="tree-test",
            policy_name="default",
            autonomy="supervised",
            source={"kind": "manual"},
            budget_tokens=1,
            bundles=["sandbox-basic"],
            connections=[],
        ).run
        filler(run.pk, per_run, marker)
    return org


def _proofs_verify(log, checkpoint) -> None:
    leaves = stored_leaves(log)
    size, root = checkpoint.tree_size, bytes(checkpoint.root)
    assert root == root_of(leaves[:size])
    reader = TreeReader(log, size)
    assert reader.root() == root
    for index in (0, 1, 255, 256, 300, size - 1):
        path = TreeReader(log, size).inclusion(index)
        InclusionProof(index, size, path).check(leaves[index], root)


def test_two_logs_each_get_their_own_tiles_from_the_cache(db):
    first = _org_with_events("first", 2, 160, "first")
    second = _org_with_events("second", 2, 160, "second")
    sequence_all()
    logs = [log_for_org(first), log_for_org(second)]
    checkpoints = [checkpoint_sign(log=log) for log in logs]
    assert [c.tree_size for c in checkpoints] == [2 * 161, 2 * 161]
    assert checkpoints[0].root != checkpoints[1].root
    for _ in range(2):  # the second time round, every tile comes from the cache
        for log, checkpoint in zip(logs, checkpoints, strict=True):
            _proofs_verify(log, checkpoint)


class _RolledBack(Exception):
    pass


def test_a_log_made_again_after_a_rollback_is_not_served_the_old_ones_tiles(db):
    """SQLite hands a rolled-back row's id out again: the cache must not take the new log
    for the old one, whose tiles it read before the rollback."""
    with pytest.raises(_RolledBack), transaction.atomic():
        ghost = _org_with_events("ghost", 2, 160, "before")
        sequence_all()
        log = log_for_org(ghost)
        _proofs_verify(log, checkpoint_sign(log=log))
        assert len(TILES) > 0
        raise _RolledBack
    again = _org_with_events("ghost", 2, 160, "after")
    sequence_all()
    log = log_for_org(again)
    checkpoint = checkpoint_sign(log=log)
    assert Checkpoint.objects.count() == 1
    _proofs_verify(log, checkpoint)
