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
from django.db import connection, transaction
from django.utils import timezone

from governance.vault import (
    VaultError,
    VaultSealed,
    keyring_lock,
    seal_secret,
    unseal_secret,
    vouch,
    vouches,
)
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


def _key_statement(key: LogKey) -> str:
    """What the vault vouches for a key: that it made this public key for this log."""
    return "\n".join(
        (
            "fluidbox ledger key",
            key.log.origin,
            key.name,
            str(key.key_id),
            bytes(key.public_key).hex(),
        )
    )


def _key_create(log: OrgLog) -> LogKey:
    private = Ed25519PrivateKey.generate()
    public = private.public_key().public_bytes_raw()
    key = LogKey(
        log=log,
        name=log.origin,
        key_id=key_id(log.origin, ED25519, public),
        public_key=public,
        private_sealed=seal_secret(base64.b64encode(private.private_bytes_raw()).decode()),
    )
    key.vouch = vouch(_key_statement(key))
    key.save()
    return key


def trusted_keys(log: OrgLog) -> tuple[list[LogKey], list[str]]:
    """The log's keys this vault vouches it made, and why each other one is not trusted.
    Raises VaultError when the vault is sealed: nothing can be said of the keys then."""
    trusted, refused = [], []
    for key in LogKey.objects.filter(log=log).select_related("log").order_by("pk"):
        if key_trusted(key):
            trusted.append(key)
        else:
            refused.append(
                f"the key {key} of {log.origin} was not made by this vault's fluidbox "
                "(a key row added past it, or one retired before keys were vouched for): "
                "nothing it signs is trusted"
            )
    return trusted, refused


def key_trusted(key: LogKey) -> bool:
    """Whether this vault made the key. A database superuser can add a key row and sign
    checkpoints with it, but cannot make the vault's token for it. A key made before keys
    were vouched for is trusted (and vouched for from then on) when its sealed private half,
    which only the vault could have sealed, is the private half of its public key; one
    retired before then, its private half wiped, cannot be told from a forged one."""
    if key.vouch:
        return vouches(key.vouch, _key_statement(key))
    if key.private_sealed and _sealed_half_matches(key):
        key.vouch = vouch(_key_statement(key))
        LogKey.objects.filter(pk=key.pk, vouch="").update(vouch=key.vouch)
        return True
    return False


def _sealed_half_matches(key: LogKey) -> bool:
    try:
        private = _private_key(key)
    except VaultSealed:
        raise
    except (VaultError, ValueError):  # not this vault's ciphertext, or not a key inside
        return False
    return private.public_key().public_bytes_raw() == bytes(key.public_key)


class UntrustedKey(VaultError):
    """The log's current key is not one this vault made: nothing is signed with it."""


def active_key(log: OrgLog) -> LogKey:
    """The log's current signing key, made on first use. Refused (UntrustedKey) when the
    vault did not make it: a key row added past fluidbox is never handed out or used."""
    key = LogKey.objects.filter(log=log, retired_at__isnull=True).order_by("-pk").first()
    if key is None:
        with transaction.atomic():
            OrgLog.objects.select_for_update().filter(pk=log.pk).first()
            key = LogKey.objects.filter(log=log, retired_at__isnull=True).order_by("-pk").first()
            if key is None:
                return _key_create(log)
    if not key_trusted(key):
        raise UntrustedKey(f"the current key {key} of {log.origin} was not made by this vault")
    return key


@transaction.atomic
def key_rotate(*, log: OrgLog) -> LogKey:
    """Retire the current key (private half wiped, public half kept) and make a new one."""
    OrgLog.objects.select_for_update().filter(pk=log.pk).first()
    keyring_lock()  # before the key rows, in a vault rotation's order: it re-seals them
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
        tree = TreeReader(log, size)
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
    """Logs that grew by N events, or grew at all and were last signed T seconds ago.

    The worker asks every second, so this is one small statement: each log's latest
    checkpoint through the (log, tree size) index, and only the due logs come back."""
    now = now or timezone.now()
    every = settings.FLUIDBOX_CHECKPOINT_EVERY_EVENTS
    quiet = timedelta(seconds=settings.FLUIDBOX_CHECKPOINT_EVERY_SECONDS)
    quote = connection.ops.quote_name
    logs, checkpoints = quote(OrgLog._meta.db_table), quote(Checkpoint._meta.db_table)
    log_id, size, c_log, tree_size, signed_at = (
        quote(OrgLog._meta.pk.column),
        quote(OrgLog._meta.get_field("size").column),
        quote(Checkpoint._meta.get_field("log").column),
        quote(Checkpoint._meta.get_field("tree_size").column),
        quote(Checkpoint._meta.get_field("signed_at").column),
    )
    latest = (
        f"FROM {checkpoints} c WHERE c.{c_log} = l.{log_id} ORDER BY c.{tree_size} DESC LIMIT 1"
    )
    query = (
        f"SELECT * FROM (SELECT l.*, (SELECT c.{tree_size} {latest}) AS signed_size, "
        f"(SELECT c.{signed_at} {latest}) AS last_signed_at FROM {logs} l WHERE l.{size} > 0) s "
        f"WHERE s.{size} > COALESCE(s.signed_size, 0) AND (s.last_signed_at IS NULL "
        f"OR s.{size} - s.signed_size >= %s OR s.last_signed_at <= %s) ORDER BY s.{log_id}"
    )
    before = connection.ops.adapt_datetimefield_value(now - quiet)
    return list(OrgLog.objects.raw(query, [every, before]))
