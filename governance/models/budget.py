"""A run's token allowance, its reservations and the usage that settled them."""

from django.db import models

from governance.policy.invisible import escape_invisible

from .runs import Run


class RunBudget(models.Model):
    """The row every reservation locks: allowance, settled spend, outstanding holds."""

    run = models.OneToOneField(
        Run, on_delete=models.CASCADE, primary_key=True, related_name="budget"
    )
    allowance = models.PositiveBigIntegerField()
    spent = models.PositiveBigIntegerField(default=0)
    outstanding = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.spent}+{self.outstanding}/{self.allowance}"

    @property
    def remaining(self) -> int:
        return max(0, self.allowance - self.spent - self.outstanding)


class ReservationStatus(models.TextChoices):
    HELD = "held"
    SETTLED = "settled"
    EXPIRED = "expired"


class BudgetReservation(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="reservations")
    request_key = models.CharField(max_length=200)
    reserved_tokens = models.PositiveBigIntegerField()
    status = models.CharField(
        max_length=8, choices=ReservationStatus.choices, default=ReservationStatus.HELD
    )
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "request_key"], name="reservation_unique_key")
        ]
        indexes = [models.Index(fields=["status", "expires_at"])]

    def __str__(self) -> str:
        # A page title shows it, and the runner chose the key.
        key = escape_invisible(self.request_key, layout_is_visible=False)
        return f"{key} ({self.reserved_tokens}, {self.status})"


class UsageEntry(models.Model):
    """Real usage; `external_id` is the reservation's primary key, so settling is idempotent."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="usage")
    external_id = models.CharField(max_length=64, unique=True)
    input_tokens = models.PositiveBigIntegerField()
    output_tokens = models.PositiveBigIntegerField()
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "usage entries"

    def __str__(self) -> str:
        return f"{self.input_tokens}+{self.output_tokens} tokens"
