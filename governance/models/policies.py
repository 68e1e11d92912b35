"""Policies and their immutable versions."""

from django.conf import settings
from django.db import models

from .orgs import Organization


class AutonomousFallback(models.TextChoices):
    ALLOW = "allow"
    DENY = "deny"


class Policy(models.Model):
    """A named, versioned rule list; runs freeze one of its versions."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="policies")
    name = models.SlugField(max_length=100)
    current_version = models.ForeignKey(
        "PolicyVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "policies"
        constraints = [models.UniqueConstraint(fields=["org", "name"], name="policy_unique_name")]

    def __str__(self) -> str:
        return self.name


class PolicyVersion(models.Model):
    """One saved state of a policy. Never changed after creation."""

    policy = models.ForeignKey(Policy, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    content = models.TextField(help_text="The YAML as saved")
    document = models.JSONField(help_text="The normalised document the engine compiles")
    digest = models.CharField(max_length=64)
    autonomous_fallback = models.CharField(max_length=8, choices=AutonomousFallback.choices)
    approval_timeout = models.PositiveIntegerField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    note = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["policy", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["policy", "number"], name="policy_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.policy.name} v{self.number}"
