"""Publishing checkpoints to witnesses (c2sp.org/tlog-witness `add-checkpoint`), so a copy
of each one lives outside the reach of whoever runs fluidbox's database.

Each configured endpoint (`FLUIDBOX_LEDGER_WITNESSES`: `https://prefix [witness vkey]`,
`;`-separated) gets every checkpoint with a consistency proof from the size it last
acknowledged. A failure is retried with backoff; a newer checkpoint supersedes a pending
older one (a witness only needs the latest). When the witness's key is configured, its
cosignature is verified and kept.
"""

import base64
import logging
import ssl
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.utils import timezone

from governance.policy.invisible import escape_invisible
from ledger.log_models import Checkpoint, Publication, PublicationStatus
from ledger.tree import TreeReader
from ledger.verify.note import EM_DASH, NoteError, SignedNote, b64decode_strict, key_id

logger = logging.getLogger(__name__)

BACKOFF = (5, 30, 120, 600)  # seconds before attempts 2, 3, 4, and every one after
MAX_ATTEMPTS = 20
COSIGNATURE_V1 = 0x04


def _printable(text: str) -> str:
    # What a witness sends back is logged and shown: its line breaks and terminal escapes
    # are written as escapes, so its answer cannot forge a log line or rewrite a screen.
    return escape_invisible(text, layout_is_visible=False)


@dataclass(frozen=True)
class Witness:
    url: str  # the submission prefix
    name: str | None = None
    public_key: bytes | None = None

    @property
    def key_id(self) -> int | None:
        if self.name is None or self.public_key is None:
            return None
        return key_id(self.name, COSIGNATURE_V1, self.public_key)


def _witness(entry: str) -> Witness:
    parts = entry.split()
    url = parts[0].rstrip("/")
    if not url.startswith("https://"):
        raise ImproperlyConfigured(f"FLUIDBOX_LEDGER_WITNESSES: {url!r} is not an https:// URL")
    if len(parts) == 1:
        return Witness(url)
    fields = parts[1].split("+", 2)
    try:
        if len(fields) != 3:
            raise NoteError("a vkey has three parts")
        raw = b64decode_strict(fields[2])
    except NoteError:
        raise ImproperlyConfigured(
            f"FLUIDBOX_LEDGER_WITNESSES: bad witness key for {url}"
        ) from None
    if len(raw) != 33 or raw[0] != COSIGNATURE_V1:
        raise ImproperlyConfigured(
            f"FLUIDBOX_LEDGER_WITNESSES: the key for {url} is not an Ed25519 cosignature "
            "vkey (type 0x04)"
        )
    witness = Witness(url, fields[0], raw[1:])
    if f"{witness.key_id:08x}" != fields[1]:
        raise ImproperlyConfigured(f"FLUIDBOX_LEDGER_WITNESSES: key id mismatch for {url}")
    return witness


def witnesses() -> list[Witness]:
    return [_witness(entry) for entry in settings.FLUIDBOX_LEDGER_WITNESSES]


def publications_create(checkpoint: Checkpoint) -> None:
    """Queue the new checkpoint for every witness; older pending ones are superseded."""
    now = timezone.now()
    for witness in witnesses():
        Publication.objects.filter(
            checkpoint__log=checkpoint.log,
            endpoint=witness.url,
            status=PublicationStatus.PENDING,
        ).update(status=PublicationStatus.SUPERSEDED)
        Publication.objects.create(checkpoint=checkpoint, endpoint=witness.url, next_attempt_at=now)


def _client() -> httpx.Client:
    verify: ssl.SSLContext | bool = True
    if settings.FLUIDBOX_LEDGER_WITNESS_CA_FILE:
        verify = ssl.create_default_context(cafile=settings.FLUIDBOX_LEDGER_WITNESS_CA_FILE)
    return httpx.Client(timeout=settings.FLUIDBOX_LEDGER_WITNESS_TIMEOUT, verify=verify)


def _acknowledged_size(publication: Publication) -> int:
    """The size this witness last cosigned for the log (0 if it never did)."""
    last = (
        Publication.objects.filter(
            checkpoint__log_id=publication.checkpoint.log_id,
            endpoint=publication.endpoint,
            status=PublicationStatus.PUBLISHED,
        )
        .order_by("-checkpoint__tree_size")
        .values_list("checkpoint__tree_size", flat=True)
        .first()
    )
    return last or 0


def add_checkpoint_body(checkpoint: Checkpoint, old_size: int) -> bytes:
    tree = TreeReader(checkpoint.log, checkpoint.tree_size)
    lines = [f"old {old_size}\n"]
    lines += [base64.b64encode(h).decode() + "\n" for h in tree.consistency(old_size)]
    return ("".join(lines) + "\n" + checkpoint.note).encode("utf-8")


def _cosignature(witness: Witness, checkpoint: Checkpoint, body: str) -> str:
    """The witness's verified cosignature line (or the raw answer when no key is set)."""
    if witness.key_id is None:
        return body.strip()[:2000]
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    cosigned = SignedNote.parse(checkpoint.note + body)
    text = SignedNote.parse(checkpoint.note).text
    for signature in cosigned.signatures:
        if (signature.name, signature.key_id) != (witness.name, witness.key_id):
            continue
        stamp, raw = signature.signature[:8], signature.signature[8:]
        message = f"cosignature/v1\ntime {int.from_bytes(stamp, 'big')}\n{text}".encode()
        try:
            Ed25519PublicKey.from_public_bytes(witness.public_key).verify(raw, message)
        except InvalidSignature:
            raise NoteError("the witness's cosignature does not verify") from None
        blob = base64.b64encode(witness.key_id.to_bytes(4, "big") + signature.signature)
        return f"{EM_DASH} {witness.name} {blob.decode()}"
    raise NoteError("the witness answered without its cosignature")


def publication_attempt(publication: Publication, client: httpx.Client) -> None:
    checkpoint = publication.checkpoint
    witness = next((w for w in witnesses() if w.url == publication.endpoint), None)
    now = timezone.now()
    if witness is None:
        publication.status = PublicationStatus.FAILED
        publication.last_error = "this endpoint is no longer configured"
        publication.save(update_fields=["status", "last_error"])
        return
    old_size = publication.old_size
    if old_size is None or old_size > checkpoint.tree_size:
        old_size = min(_acknowledged_size(publication), checkpoint.tree_size)
    error = ""
    for _ in range(2):  # once more after a 409 that tells us the witness's size
        try:
            response = client.post(
                f"{witness.url}/add-checkpoint",
                content=add_checkpoint_body(checkpoint, old_size),
                headers={"Content-Type": "text/plain; charset=utf-8"},
            )
        except httpx.HTTPError as failure:
            error = f"{type(failure).__name__}: {failure}"
            break
        if response.status_code == 409 and response.text.strip().isdigit():
            witness_size = int(response.text.strip())
            if witness_size <= checkpoint.tree_size and witness_size != old_size:
                old_size = witness_size
                continue
            error = f"409: the witness holds size {witness_size}"
            break
        if response.status_code == 200:
            try:
                cosignature = _cosignature(witness, checkpoint, response.text)
            except NoteError as bad:
                error = f"bad cosignature: {_printable(str(bad))}"
                break
            publication.status = PublicationStatus.PUBLISHED
            publication.cosignature = cosignature
            publication.published_at = now
            publication.old_size = old_size
            publication.attempts += 1
            publication.last_error = ""
            publication.save()
            return
        error = f"{response.status_code}: {_printable(response.text[:200])}"
        break
    publication.attempts += 1
    publication.old_size = old_size
    publication.last_error = error[:500]
    if publication.attempts >= MAX_ATTEMPTS:
        publication.status = PublicationStatus.FAILED
    else:
        delay = BACKOFF[min(publication.attempts - 1, len(BACKOFF) - 1)]
        publication.next_attempt_at = now + timedelta(seconds=delay)
    publication.save()
    logger.warning("publishing %s to %s failed: %s", checkpoint, witness.url, error)


def _any_due(now: datetime) -> bool:
    quote = connection.ops.quote_name
    table = quote(Publication._meta.db_table)
    status = quote(Publication._meta.get_field("status").column)
    next_attempt = quote(Publication._meta.get_field("next_attempt_at").column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {table} WHERE {status} = %s AND {next_attempt} <= %s LIMIT 1",
            [PublicationStatus.PENDING.value, connection.ops.adapt_datetimefield_value(now)],
        )
        return cursor.fetchone() is not None


def publications_attempt_due(now: datetime | None = None) -> int:
    """Try every due publication once; returns how many were attempted."""
    now = now or timezone.now()
    due = Publication.objects.filter(status=PublicationStatus.PENDING, next_attempt_at__lte=now)
    if not _any_due(now):  # the worker asks every second: a cheap "no" first
        return 0
    due = list(due.select_related("checkpoint__log").order_by("checkpoint__tree_size"))
    lease = timedelta(seconds=settings.FLUIDBOX_LEDGER_WITNESS_TIMEOUT * 3)
    attempted = 0
    with _client() as client:
        for publication in due:
            # Claim it by moving its next attempt on (compare-and-swap), then talk to the
            # witness outside any transaction: a slow witness holds no lock and no snapshot.
            claimed = Publication.objects.filter(
                pk=publication.pk,
                status=PublicationStatus.PENDING,
                next_attempt_at=publication.next_attempt_at,
            ).update(next_attempt_at=now + lease)
            if claimed:
                publication_attempt(publication, client)
                attempted += 1
    return attempted
