"""Tenants and who belongs to them."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models


def validate_allowed_hosts(text: str) -> None:
    from governance.egress import AllowListError, allow_list_lines, parse_allow_list

    try:
        parse_allow_list(allow_list_lines(text))
    except AllowListError as error:
        raise ValidationError(str(error)) from None


class Organization(models.Model):
    """A tenant: every governed object belongs to exactly one."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    connection_allowed_hosts = models.TextField(
        blank=True,
        validators=[validate_allowed_hosts],
        help_text="Internal hosts this organization's connections may reach (loopback, private "
        "and link-local addresses are refused otherwise): one per line, a hostname, an IP "
        "address or a CIDR network, optionally with :port, e.g. tracker.internal:8080 or "
        "10.1.0.0/16.",
    )
    # Changed (to a new random value) whenever one of its agent secrets is set: each process
    # registers the organization's agent secrets for masking again when it reads a new one
    # (`agent_secrets.register_for_masking`).
    agent_secrets_stamp = models.CharField(max_length=32, blank=True, default="", editable=False)
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
