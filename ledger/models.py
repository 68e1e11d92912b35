"""The append-only ledger: one hash-chained, gapless sequence of redacted events per run."""

from django.db import models


class EventType(models.TextChoices):
    RUN_CREATED = "run.created"
    BUDGET_RESERVED = "budget.reserved"
    BUDGET_SETTLED = "budget.settled"
    BUDGET_DENIED = "budget.denied"
    TOOL_REQUESTED = "tool.requested"
    TOOL_DECISION = "tool.decision"
    APPROVAL_REQUESTED = "approval.requested"
    APPROVAL_DECIDED = "approval.decided"
    TOOL_BROKERED = "tool.brokered"
    RUN_FINISHED = "run.finished"
    # The owner of a personal connection approved or refused a run's use of it.
    BINDING_DECIDED = "binding.decided"


GENESIS_HASH = "0" * 64


class AppendOnlyError(Exception):
    """Raised on any attempt to change or remove a ledger row through the ORM."""


class EventQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnlyError("ledger events are append-only")

    def delete(self):
        raise AppendOnlyError("ledger events are append-only")

    # bulk_update is another path to UPDATE; bulk_create stays for nobody but event_append.
    def bulk_update(self, objs, fields, batch_size=None):
        raise AppendOnlyError("ledger events are append-only")


class RunCounter(models.Model):
    """The per-run row locked while appending: last seq and last hash."""

    run = models.OneToOneField(
        "governance.Run", on_delete=models.CASCADE, primary_key=True, related_name="ledger_counter"
    )
    last_seq = models.PositiveBigIntegerField(default=0)
    last_hash = models.CharField(max_length=64, default=GENESIS_HASH)

    def __str__(self) -> str:
        return f"{self.run_id}: {self.last_seq}"


class Event(models.Model):
    """One ledger entry. Built only by `ledger.services.event_append`."""

    # No index of its own: the unique (run, seq) index starts with it.
    run = models.ForeignKey(
        "governance.Run", on_delete=models.PROTECT, related_name="events", db_index=False
    )
    seq = models.PositiveBigIntegerField()
    type = models.CharField(max_length=32, choices=EventType.choices)
    at = models.DateTimeField()
    data = models.JSONField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    objects = EventQuerySet.as_manager()

    class Meta:
        ordering = ["run", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="event_unique_seq")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.seq} {self.type}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnlyError("ledger events are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("ledger events are append-only")


class SinkKind(models.TextChoices):
    JSON_LINES = "jsonl", "HTTPS endpoint, JSON lines"
    SPLUNK_HEC = "splunk_hec", "Splunk HTTP Event Collector"


class AuditSink(models.Model):
    """Where an organization's ledger is streamed: every event, in seq order per run, at
    least once. Delivered by `manage.py ledger stream` (`ledger.streaming`)."""

    org = models.ForeignKey(
        "governance.Organization", on_delete=models.CASCADE, related_name="audit_sinks"
    )
    name = models.SlugField(max_length=64)
    kind = models.CharField(max_length=16, choices=SinkKind.choices)
    url = models.URLField(max_length=500)
    # The HEC token or the endpoint's bearer token, sealed under the machine key.
    token_sealed = models.TextField(blank=True, editable=False)
    is_active = models.BooleanField(default=True)
    max_backlog = models.PositiveIntegerField(
        default=1_000_000,
        help_text="Undelivered events a dead sink may fall behind by; past it the oldest are "
        "dropped (and counted) rather than held forever.",
    )
    delivered_events = models.PositiveBigIntegerField(default=0, editable=False)
    dropped_events = models.PositiveBigIntegerField(default=0, editable=False)
    failed_attempts = models.PositiveBigIntegerField(default=0, editable=False)
    consecutive_failures = models.PositiveIntegerField(default=0, editable=False)
    next_attempt_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_success_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_error = models.CharField(max_length=300, blank=True, editable=False)
    last_error_at = models.DateTimeField(null=True, blank=True, editable=False)
    # One deliverer per sink at a time (order per run depends on it): a lease, not a lock
    # held across the HTTP request.
    lease_owner = models.CharField(max_length=64, blank=True, editable=False)
    lease_expires_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "name"], name="sink_unique_name")]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        """`<org>/<name>`: the `sink` label in /metrics."""
        return f"{self.org.slug}/{self.name}"


class SinkCursor(models.Model):
    """The last seq of one run that one sink acknowledged: delivery resumes right after it."""

    sink = models.ForeignKey(AuditSink, on_delete=models.CASCADE, related_name="cursors")
    run = models.ForeignKey(
        "governance.Run", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    acked_seq = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sink", "run"], name="sink_cursor_unique_run")
        ]

    def __str__(self) -> str:
        return f"{self.sink_id}/{self.run_id}: {self.acked_seq}"


# The auditor's log lives in its own module; Django finds its models through this one.
from ledger.log_models import (  # noqa: E402
    Checkpoint,
    LedgerCheck,
    LogKey,
    LogLeaf,
    LogTile,
    OrgLog,
    Publication,
    PublicationStatus,
    SequencerState,
)

__all__ = [
    "GENESIS_HASH",
    "AppendOnlyError",
    "Checkpoint",
    "Event",
    "EventType",
    "LedgerCheck",
    "LogKey",
    "LogLeaf",
    "LogTile",
    "OrgLog",
    "Publication",
    "PublicationStatus",
    "RunCounter",
    "SequencerState",
]
