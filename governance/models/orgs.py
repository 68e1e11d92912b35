"""Tenants and who belongs to them."""

from django.conf import settings
from django.db import models


class Organization(models.Model):
    """A tenant: every governed object belongs to exactly one."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class Role(models.TextChoices):
    ADMIN = "admin"
    APPROVER = "approver"
    AUDITOR = "auditor"
    MEMBER = "member"


DECIDING_ROLES = (Role.ADMIN, Role.APPROVER)


class Membership(models.Model):
    """A user's role in one organization."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "user"], name="membership_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.org} ({self.role})"
