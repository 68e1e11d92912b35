"""Signed checkpoints (c2sp.org/tlog-checkpoint as a c2sp.org/signed-note, Ed25519) of each
organization's Merkle log, and the keys that sign them.

The private key is sealed in the vault's second tier, so a copy of the database alone
cannot sign. A rotation retires the key (its private half is wiped, its public half kept)
and every later checkpoint names the new key's id; older checkpoints still verify with the
old public key. A checkpoint is signed only if the stored tree is consistent with the
previous checkpoint: the log never signs two histories.
"""

import base64
import logging
from datetime import datetime, timedelta

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from governance.vault import seal_secret, unseal_secret
from ledger.log_models import Checkpoint, LogKey, OrgLog
from ledger.tree import TreeReader
from ledger.verify.merkle import ProofError, verify_consistency
from ledger.verify.note import (
    ED25519,
    VerifierKey,
    checkpoint_text,
    key_id,
    signature_line,
)

logger = logging.getLogger(__name__)


class CheckpointRefused(Exception):
    """The stored tree does not extend the last checkpoint: signing it would fork the log."""


def verifier_key(key: LogKey) -> VerifierKey:
    return VerifierKey(name=key.name, key_id=key.key_id, public_key=bytes(key.public_key))


def vkey_of(key: LogKey) -> str:
    return verifier_key(key).encode()


def _key_create(log: OrgLog) -> LogKey:
    private = Ed25519PrivateKey.generate()
    public = private.public_key().public_bytes_raw()
    return LogKey.objects.create(
        log=log,
        name=log.origin,
        key_id=key_id(log.origin, ED25519, public),
        public_key=public,
        private_sealed=seal_secret(base64.b64encode(private.private_bytes_raw()).decode()),
    )


def active_key(log: OrgLog) -> LogKey:
    """The log's current signing key, made on first use."""
    key = LogKey.objects.filter(log=log, retired_at__isnull=True).order_by("-pk").first()
    if key is None:
        with transaction.atomic():
            OrgLog.objects.select_for_update().filter(pk=log.pk).first()
            key = LogKey.objects.filter(log=log, retired_at__isnull=True).order_by("-pk").first()
            if key is None:
                key = _key_create(log)
    return key


@transaction.atomic
def key_rotate(*, log: OrgLog) -> LogKey:
    """Retire the current key (private half wiped, public half kept) and make a new one."""
    OrgLog.objects.select_for_update().filter(pk=log.pk).first()
    LogKey.objects.filter(log=log, retired_at__isnull=True).update(
        retired_at=timezone.now(), private_sealed=""
    )
    return _key_create(log)


def _private_key(key: LogKey) -> Ed25519PrivateKey:
    raw = base64.b64decode(unseal_secret(key.private_sealed))
    return Ed25519PrivateKey.from_private_bytes(raw)


def latest_checkpoint(log: OrgLog) -> Checkpoint | None:
    return Checkpoint.objects.filter(log=log).order_by("-tree_size").first()


def checkpoint_sign(*, log: OrgLog, force: bool = False) -> Checkpoint | None:
    """Sign the log's tree at its sequenced size. Returns the new checkpoint, or None when
    the last one already covers that size (`force` signs an empty log's first one too)."""
    from ledger.publishing import publications_create

    with transaction.atomic():
        log = OrgLog.objects.select_for_update().get(pk=log.pk)
        last = latest_checkpoint(log)
        size = log.size
        if last is not None and last.tree_size == size:
            return None
        if last is None and size == 0 and not force:
            return None
        if last is not None and last.tree_size > size:
            raise CheckpointRefused(
                f"{log.origin}: checkpoint of size {last.tree_size} but only {size} leaves"
            )
        tree = TreeReader(log.pk, size)
        root = tree.root()
        if last is not None:
            try:
                verify_consistency(
                    last.tree_size, size, tree.consistency(last.tree_size), bytes(last.root), root
                )
            except ProofError as error:
                raise CheckpointRefused(
                    f"{log.origin}: the stored tree of size {size} does not extend the "
                    f"checkpoint of size {last.tree_size} ({error}); refusing to sign"
                ) from None
        key = active_key(log)
        text = checkpoint_text(log.origin, size, root)
        signature = _private_key(key).sign(text.encode("utf-8"))
        checkpoint = Checkpoint.objects.create(
            log=log,
            tree_size=size,
            root=root,
            key=key,
            note=text + "\n" + signature_line(key.name, key.key_id, signature),
            signed_at=timezone.now(),
        )
        publications_create(checkpoint)
    logger.info("signed checkpoint %s@%s", log.origin, size)
    return checkpoint


def logs_due(now: datetime | None = None) -> list[OrgLog]:
    """Logs that grew by N events, or grew at all and were last signed T seconds ago."""
    now = now or timezone.now()
    every = settings.FLUIDBOX_CHECKPOINT_EVERY_EVENTS
    quiet = timedelta(seconds=settings.FLUIDBOX_CHECKPOINT_EVERY_SECONDS)
    due = []
    logs = OrgLog.objects.filter(size__gt=0).annotate(
        signed_size=Max("checkpoints__tree_size"), signed_at=Max("checkpoints__signed_at")
    )
    for log in logs:
        signed = log.signed_size or 0
        if log.size <= signed:
            continue
        if log.signed_at is None or log.size - signed >= every or now - log.signed_at >= quiet:
            due.append(log)
    return due
