"""Where approval requests are announced, and each delivery's attempts."""

from django.db import models

from .approvals import Approval
from .orgs import Organization


class ChannelKind(models.TextChoices):
    WEBHOOK = "webhook"
    EMAIL = "email"


class NotificationChannel(models.Model):
    """A signed webhook (Slack-compatible JSON) or an email list."""

    org = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="notification_channels"
    )
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=8, choices=ChannelKind.choices)
    url = models.URLField(max_length=500, blank=True)
    secret_sealed = models.TextField(blank=True, editable=False)
    emails = models.TextField(blank=True, help_text="Recipients, one per line")
    is_active = models.BooleanField(default=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    SENDING = "sending"  # an attempt has claimed it and is sending
    SENT = "sent"
    FAILED = "failed"


class NotificationDelivery(models.Model):
    channel = models.ForeignKey(
        NotificationChannel, on_delete=models.CASCADE, related_name="deliveries"
    )
    approval = models.ForeignKey(Approval, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(
        max_length=8, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "notification deliveries"
        constraints = [
            models.UniqueConstraint(fields=["channel", "approval"], name="delivery_unique")
        ]

    def __str__(self) -> str:
        return f"{self.channel} → approval {self.approval_id} ({self.status})"
