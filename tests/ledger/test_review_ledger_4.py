"""Review of the auditor's transparency log, from the auditor's side: independently held
checkpoints handed to the offline verifier, and the consistency-proof endpoint over a
stored tree a database superuser has tampered with."""

import pytest
from django.db import connection

from ledger.log_models import LogTile
from ledger.sequencer import log_for_org
from ledger.verify.note import checkpoint_text, signature_line
from tests.ledger.support import (
    checkpoint_now,
    export,
    gate_traffic,
    offline_verify,
    real_private_key,
    superuser_sql,
    vkey,
)
from tests.ledger.test_tampering import history  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def _signed(log, size: int, root: bytes) -> str:
    """A checkpoint note signed with the log's own key (an operator showing a split view)."""
    key, private = real_private_key(log)
    text = checkpoint_text(log.origin, size, root)
    return text + "\n" + signature_line(key.name, key.key_id, private.sign(text.encode()))


@pytest.mark.usefixtures("history")
def test_two_held_checkpoints_of_one_size_with_different_roots_are_a_fork(org, tmp_path):
    # Proves: the log's key signed two different roots for tree size 36 (a split view: one
    # witness got the real tree, another a forked one), and the auditor brings both copies.
    # Size 36 is not one of the bundle's checkpoints, so each copy is to be held to the
    # bundle's leaves. Whatever order the auditor names them in, the verifier must not say
    # OK and "agrees with 2 independently held checkpoint(s)": one of them cannot agree.
    # Before the fix only the last copy named was checked: [forked, real] verified OK.
    from ledger.tree import TreeReader

    log = log_for_org(org)
    real_root = TreeReader(log, 36, cache=None).root()
    real = tmp_path / "witness-a.checkpoint"
    real.write_text(_signed(log, 36, real_root))
    forked = tmp_path / "witness-b.checkpoint"
    forked.write_text(_signed(log, 36, bytes(32)))
    bundle = export(tmp_path, org="acme")

    alone = offline_verify(bundle, vkey(org), checkpoints=[real])
    assert alone.returncode == 0, alone.stderr
    for order in ([real, forked], [forked, real]):
        result = offline_verify(bundle, vkey(org), checkpoints=order)
        assert result.returncode == 1, (order, result.stdout, result.stderr)
        assert result.stdout == ""
        assert "tree size 36" in result.stderr, result.stderr


@pytest.mark.usefixtures("history")
def test_a_held_checkpoint_of_the_empty_tree_with_a_root_is_refused(org, tmp_path):
    # Proves: a signed checkpoint of tree size 0 whose root is not the empty tree's root
    # (SHA-256 of nothing) agrees with no history. Before the fix, size 0 was queued to be
    # compared once 0 leaves had been read, which never happens: it verified OK.
    log = log_for_org(org)
    held = tmp_path / "empty.checkpoint"
    held.write_text(_signed(log, 0, bytes(32)))
    result = offline_verify(export(tmp_path, org="acme"), vkey(org), checkpoints=[held])
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "tree size 0" in result.stderr, result.stderr


def test_a_consistency_proof_over_a_tampered_tree_is_a_409_not_a_500(org, operator, make_run):
    # Proves: with a full tile of the stored tree deleted (a database superuser past the
    # append-only triggers), the auditor asking for a consistency proof between two signed
    # checkpoints gets the same answer as for an inclusion proof, a 409 naming the
    # tampering, not a server error.
    from tests.ledger.test_audit_api import filler

    run_id, runner = make_run()
    gate_traffic(runner, run_id, 2)
    filler(run_id, 300)  # past 256 leaves: a full tile is written
    first = checkpoint_now(org)
    filler(run_id, 10)
    second = checkpoint_now(org)
    log = log_for_org(org)
    assert LogTile.objects.filter(log=log, level=0, index=0).exists()
    quote = connection.ops.quote_name
    superuser_sql(
        f"DELETE FROM {quote(LogTile._meta.db_table)} WHERE log_id = %s AND level = 0 "
        f"AND {quote('index')} = 0",
        [log.pk],
    )
    from ledger.tree import TILES

    TILES.clear()
    response = operator.get(
        "/v1/ledger/proofs/consistency",
        data={"first": first.tree_size, "second": second.tree_size},
    )
    assert response.status_code == 409, response.content
    assert set(response.json()) >= {"error", "detail"}
