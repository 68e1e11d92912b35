"""The auditor's log: each organization's ledger events as leaves of an RFC 6962 Merkle
tree, the tree's hashes, the signing keys and the signed checkpoints.

Leaves are assigned by the sequencer (`ledger.sequencer`) after the events commit, never in
the gate's transaction. Leaves, tiles and checkpoints are append-only like the events
(database triggers: `ledger.append_only`).
"""

from django.db import models


class OrgLog(models.Model):
    """One organization's Merkle log. `size` is how many leaves the sequencer has assigned."""

    org = models.OneToOneField(
        "governance.Organization", on_delete=models.PROTECT, related_name="ledger_log"
    )
    origin = models.CharField(max_length=200, unique=True)
    size = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.origin


class LogLeaf(models.Model):
    """Event `event` is leaf `index` of its organization's tree; `hash` is the RFC 6962 leaf
    hash of the event's chain hash."""

    # No index of its own: the unique (log, index) index starts with it.
    # db_constraint=False: on PostgreSQL a foreign key is checked row by row, and for the
    # sequencer's batches those two checks cost more than writing the leaves. One trigger
    # per statement checks every new leaf's log and event instead (migration 0007); SQLite
    # keeps its foreign keys. Neither kind of row can be deleted (ledger.append_only).
    log = models.ForeignKey(
        OrgLog, on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    index = models.PositiveBigIntegerField()
    event = models.OneToOneField(
        "ledger.Event", on_delete=models.PROTECT, related_name="leaf", db_constraint=False
    )
    hash = models.BinaryField(max_length=32)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["log", "index"], name="log_leaf_unique_index")
        ]

    def __str__(self) -> str:
        return f"{self.log_id}:{self.index}"


class LogTile(models.Model):
    """A full tile (c2sp.org/tlog-tiles): the 256 consecutive hashes at tree level 8 × `level`
    starting at tile `index`, and their Merkle root. Written once, when it fills up."""

    log = models.ForeignKey(OrgLog, on_delete=models.PROTECT, related_name="+", db_index=False)
    level = models.PositiveSmallIntegerField()
    index = models.PositiveBigIntegerField()
    hashes = models.BinaryField()
    root = models.BinaryField(max_length=32)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["log", "level", "index"], name="log_tile_unique")
        ]

    def __str__(self) -> str:
        return f"{self.log_id}:tile/{self.level}/{self.index}"


class LogKey(models.Model):
    """An Ed25519 checkpoint signing key. The private key is sealed in the vault (tier 2)
    and wiped when the key is retired; the public key is kept forever, so checkpoints it
    signed stay verifiable after a rotation."""

    log = models.ForeignKey(OrgLog, on_delete=models.PROTECT, related_name="keys")
    name = models.CharField(max_length=200)
    key_id = models.PositiveBigIntegerField()
    public_key = models.BinaryField(max_length=32)
    private_sealed = models.TextField(blank=True)
    # The vault's token saying it made this key for this log (`ledger.checkpoints`): a key
    # row added past fluidbox has none, and signs nothing fluidbox trusts.
    vouch = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["log", "key_id"], name="log_key_unique_id")]

    def __str__(self) -> str:
        return f"{self.name}+{self.key_id:08x}"


class Checkpoint(models.Model):
    """A signed C2SP checkpoint of one organization's tree: `note` is the whole signed note."""

    log = models.ForeignKey(
        OrgLog, on_delete=models.PROTECT, related_name="checkpoints", db_index=False
    )
    tree_size = models.PositiveBigIntegerField()
    root = models.BinaryField(max_length=32)
    key = models.ForeignKey(LogKey, on_delete=models.PROTECT, related_name="+")
    note = models.TextField()
    signed_at = models.DateTimeField()

    class Meta:
        ordering = ["log", "tree_size"]
        constraints = [
            models.UniqueConstraint(fields=["log", "tree_size"], name="checkpoint_unique_size")
        ]

    def __str__(self) -> str:
        return f"{self.log_id}@{self.tree_size}"


class PublicationStatus(models.TextChoices):
    PENDING = "pending"
    PUBLISHED = "published"
    FAILED = "failed"
    SUPERSEDED = "superseded"


class Publication(models.Model):
    """A checkpoint pushed to one witness endpoint (c2sp.org/tlog-witness `add-checkpoint`),
    retried with backoff until it lands or a newer checkpoint replaces it."""

    checkpoint = models.ForeignKey(
        Checkpoint, on_delete=models.PROTECT, related_name="publications"
    )
    endpoint = models.CharField(max_length=500)
    status = models.CharField(
        max_length=12, choices=PublicationStatus.choices, default=PublicationStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    old_size = models.PositiveBigIntegerField(null=True, blank=True)
    cosignature = models.TextField(blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["checkpoint", "endpoint"], name="publication_unique_endpoint"
            )
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="publication_due")]

    def __str__(self) -> str:
        return f"{self.checkpoint} -> {self.endpoint}"


class SequencedRun(models.Model):
    """The last seq of a run that has its leaf: the sequencer gives a run's events leaves in
    seq order only. Its own table, never the gate's counter row, so the sequencer never
    waits on (or blocks) an append."""

    run = models.OneToOneField(
        "governance.Run", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    seq = models.PositiveBigIntegerField()

    def __str__(self) -> str:
        return f"{self.run_id}: {self.seq}"


class SequencerState(models.Model):
    """Where the sequencer is: every event with id ≤ `watermark` has its leaf. `pending_*`
    is a horizon waiting to become safe (see `ledger.sequencer`)."""

    name = models.CharField(max_length=32, unique=True, default="ledger")
    watermark = models.BigIntegerField(default=0)
    # The highest event id given a leaf: rounds scan on from here, and sweep from the
    # watermark (for events that committed late) only when it can move or now and then.
    cursor = models.BigIntegerField(default=0)
    swept_at = models.DateTimeField(null=True, blank=True)
    pending_max_id = models.BigIntegerField(null=True, blank=True)
    pending_xmax = models.BigIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.name}: {self.watermark}"


class LedgerCheck(models.Model):
    """One check of the whole ledger as stored (`ledger.chain_checks.ledger_check`): every run's
    chain against its events and leaves, every organization's leaves against its signed
    root, and leaves whose event is gone. The worker makes one every
    FLUIDBOX_LEDGER_CHECK_MINUTES, and `manage.py ledger verify --all` one each time it runs;
    the run page and `/metrics` read the latest finished one."""

    started_at = models.DateTimeField(db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    by = models.CharField(max_length=16)  # worker, command
    runs = models.PositiveBigIntegerField(default=0)
    events = models.PositiveBigIntegerField(default=0)
    leaves = models.PositiveBigIntegerField(default=0)
    problem_count = models.PositiveIntegerField(default=0)
    # The first problems found, each {"org": organization id or null, "text": …}.
    problems = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"{self.started_at:%Y-%m-%d %H:%M:%S}: {self.problem_count} problem(s)"
