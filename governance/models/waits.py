"""Slots for requests that hold a thread for long (approval waits, event streams)."""

from django.db import models


class WaitSlot(models.Model):
    """One of a credential's few long-request slots, held until released or expired.

    Counted in the database, not in a process, so the cap holds across every web process;
    the expiry frees a slot whose process died while holding it.
    """

    credential = models.CharField(max_length=80)
    slot = models.PositiveSmallIntegerField()
    holder = models.UUIDField()
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["credential", "slot"], name="wait_slot_unique")
        ]

    def __str__(self) -> str:
        return f"{self.credential}#{self.slot}"
