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


# The auditor's log lives in its own module; Django finds its models through this one.
from ledger.log_models import (  # noqa: E402
    Checkpoint,
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
    "LogKey",
    "LogLeaf",
    "LogTile",
    "OrgLog",
    "Publication",
    "PublicationStatus",
    "RunCounter",
    "SequencerState",
]
