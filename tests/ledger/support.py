"""Helpers for the auditor's-ledger tests: real gate traffic, the sequencer, exports, the
offline verifier run as an auditor would (a separate process without Django), and the
tampering a database superuser could do."""

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from ledger.append_only import append_only_suspended
from ledger.checkpoints import active_key, checkpoint_sign, vkey_of
from ledger.log_models import Checkpoint, LogKey, LogLeaf, LogTile, OrgLog
from ledger.models import Event, RunCounter
from ledger.sequencer import log_for_org, sequence
from ledger.tree import TreeReader
from ledger.verify.note import ED25519, checkpoint_text, key_id, signature_line

ROOT = Path(__file__).resolve().parents[2]
CALLS = (
    ("read_file", {"path": "/workspace/README.md"}),
    ("run_command", {"command": "git status"}),
    ("run_command", {"command": "rm -rf /"}),
    ("write_file", {"path": "/workspace/notes.txt", "content": "hello"}),
)


def gate_traffic(runner, run_id: str, calls: int, *, prefix: str = "c") -> None:
    for index in range(calls):
        tool, arguments = CALLS[index % len(CALLS)]
        response = runner.post(
            f"/v1/runs/{run_id}/permission",
            {
                "session_id": "s-1",
                "tool_call_id": f"{prefix}-{index}",
                "tool": tool,
                "arguments": arguments,
            },
        )
        assert response.status_code == 200, response.content


def checkpoint_now(org) -> Checkpoint:
    """What the worker does when a checkpoint is due: sequence, then sign."""
    sequence()
    checkpoint = checkpoint_sign(log=log_for_org(org))
    assert checkpoint is not None
    return checkpoint


def export(tmp_path: Path, name: str = "bundle.jsonl", **scope) -> Path:
    out = tmp_path / name
    args = ["ledger", "export"]
    for key, value in scope.items():
        args += [f"--{key}", str(value)]
    call_command(*args, str(out))
    return out


def vkey(org) -> str:
    return vkey_of(active_key(log_for_org(org)))


def offline_verify(bundle: Path, *keys: str, checkpoints=()) -> subprocess.CompletedProcess:
    """`python -m ledger.verify` in a clean process: no Django settings, no database URL."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO", "DATABASE"))}
    args = [sys.executable, "-m", "ledger.verify", str(bundle)]
    for key in keys:
        args += ["--public-key", key]
    for held in checkpoints:
        args += ["--checkpoint", str(held)]
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def run_value(run_id):
    """A run id as the raw SQL of this database stores it."""
    import uuid

    return uuid.UUID(str(run_id)).hex if connection.vendor == "sqlite" else str(run_id)


def superuser_sql(sql: str, params=()) -> int:
    """One statement as the database superuser, past the append-only triggers."""
    with append_only_suspended(), connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        return cursor.rowcount


def rechain_run(run_id) -> None:
    """What a careful forger does after editing an event: recompute the run's chain so that
    `ledger verify` passes again."""
    from ledger.models import GENESIS_HASH
    from ledger.services import event_hash

    previous = GENESIS_HASH
    for event in Event.objects.filter(run_id=run_id).order_by("seq"):
        digest = event_hash(
            prev_hash=previous,
            run_id=event.run_id,
            seq=event.seq,
            type=event.type,
            at=event.at,
            data=event.data,
        )
        superuser_sql(
            f"UPDATE {Event._meta.db_table} SET prev_hash = %s, hash = %s WHERE id = %s",
            [previous, digest, event.pk],
        )
        previous = digest


def allow_a_denial(run_id) -> Event:
    """Turn one `tool.decision` deny into allow and recompute the chain and the counter."""
    denied = next(
        event
        for event in Event.objects.filter(run_id=run_id, type="tool.decision").order_by("seq")
        if event.data.get("decision") == "deny"
    )
    data = {**denied.data, "decision": "allow"}
    superuser_sql(
        f"UPDATE {Event._meta.db_table} SET data = %s WHERE id = %s", [json.dumps(data), denied.pk]
    )
    rechain_run(run_id)
    head = Event.objects.filter(run_id=run_id).order_by("-seq").first()
    RunCounter.objects.filter(run_id=run_id).update(last_seq=head.seq, last_hash=head.hash)
    return denied


def rebuild_tree(org) -> OrgLog:
    """A forger's fresh tree over whatever the events table now holds."""
    from ledger.log_models import SequencedRun, SequencerState

    log = log_for_org(org)
    for model in (LogLeaf, LogTile):
        superuser_sql(f"DELETE FROM {model._meta.db_table} WHERE log_id = %s", [log.pk])
    OrgLog.objects.filter(pk=log.pk).update(size=0)
    SequencedRun.objects.all().delete()
    SequencerState.objects.update(
        watermark=0, cursor=0, swept_at=None, pending_max_id=None, pending_xmax=None
    )
    sequence()
    log.refresh_from_db()
    return log


def delete_checkpoints(log, *, above: int = -1) -> None:
    from ledger.log_models import Publication

    ids = list(Checkpoint.objects.filter(log=log, tree_size__gt=above).values_list("pk", flat=True))
    for pk in ids:
        superuser_sql(f"DELETE FROM {Publication._meta.db_table} WHERE checkpoint_id = %s", [pk])
        superuser_sql(f"DELETE FROM {Checkpoint._meta.db_table} WHERE id = %s", [pk])


def forge_checkpoint(log, size: int, key: LogKey, private: Ed25519PrivateKey) -> Checkpoint:
    """Sign the stored tree at `size` with whatever key the forger holds."""
    root = TreeReader(log, size, cache=None).root()  # the forger reads the tampered rows
    text = checkpoint_text(log.origin, size, root)
    note = text + "\n" + signature_line(key.name, key.key_id, private.sign(text.encode()))
    return Checkpoint.objects.create(
        log=log, tree_size=size, root=root, key=key, note=note, signed_at=timezone.now()
    )


def forger_key(log) -> tuple[LogKey, Ed25519PrivateKey]:
    """A key the forger made for themselves, under the log's own name."""
    private = Ed25519PrivateKey.generate()
    public = private.public_key().public_bytes_raw()
    key = LogKey.objects.create(
        log=log,
        name=log.origin,
        key_id=key_id(log.origin, ED25519, public),
        public_key=public,
    )
    return key, private


def real_private_key(log) -> tuple[LogKey, Ed25519PrivateKey]:
    """The log's own signing key, unsealed: a forger who also holds the vault."""
    from governance.vault import unseal_secret

    key = active_key(log)
    raw = base64.b64decode(unseal_secret(key.private_sealed))
    return key, Ed25519PrivateKey.from_private_bytes(raw)
