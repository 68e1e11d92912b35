"""Connections to MCP servers, each with a sealed credential and a photograph of its tools."""

from django.conf import settings
from django.db import models

from .orgs import Organization


class ConnectionKind(models.TextChoices):
    SHARED = "shared"
    PERSONAL = "personal"


class Transport(models.TextChoices):
    STREAMABLE_HTTP = "streamable-http"
    STDIO = "stdio"


class ConnectionStatus(models.TextChoices):
    ACTIVE = "active"
    REVOKED = "revoked"


class CredentialPlacement(models.TextChoices):
    HEADER = "header"
    ENV = "env"


class Connection(models.Model):
    """An MCP server the broker may call on the org's (or one owner's) behalf."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="connections")
    slug = models.SlugField(max_length=64)
    kind = models.CharField(max_length=8, choices=ConnectionKind.choices)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="personal_connections",
    )
    transport = models.CharField(max_length=16, choices=Transport.choices)
    url = models.URLField(max_length=500, blank=True)
    command = models.JSONField(default=list, blank=True)
    status = models.CharField(
        max_length=8, choices=ConnectionStatus.choices, default=ConnectionStatus.ACTIVE
    )
    authorization_generation = models.PositiveIntegerField(default=1)
    credential_placement = models.CharField(
        max_length=8, choices=CredentialPlacement.choices, blank=True
    )
    credential_name = models.CharField(max_length=100, blank=True)
    credential_sealed = models.TextField(blank=True, editable=False)
    # A personal connection's credential given by someone other than its owner (an operator
    # or an admin creating it for them): until the owner reconnects it with their own, every
    # run's binding of it waits for the owner's consent, runs they make themselves included.
    credential_from_owner = models.BooleanField(default=True, editable=False)
    photograph = models.JSONField(default=list, blank=True, editable=False)
    photograph_digest = models.CharField(max_length=64, blank=True, editable=False)
    photographed_at = models.DateTimeField(null=True, blank=True, editable=False)
    previous_photograph = models.JSONField(default=list, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "slug"], name="connection_unique_slug")
        ]

    def __str__(self) -> str:
        return self.slug

    @property
    def is_personal(self) -> bool:
        return self.kind == ConnectionKind.PERSONAL


class AgentSecret(models.Model):
    """A secret the runner injects into a `secrets: true` tool's environment at execution."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="agent_secrets")
    agent = models.CharField(
        max_length=100, blank=True, help_text="Agent name; blank means every agent of the org"
    )
    name = models.CharField(max_length=100, help_text="Environment variable name")
    value_sealed = models.TextField(editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "agent", "name"], name="agent_secret_unique")
        ]

    def __str__(self) -> str:
        return f"{self.agent or '*'}:{self.name}"
