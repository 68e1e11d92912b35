"""Runs and everything they freeze at creation."""

import uuid

from django.conf import settings
from django.db import models

from governance.policy.invisible import escape_invisible

from .bundles import Access
from .connections import Connection
from .orgs import Organization
from .policies import PolicyVersion


class Autonomy(models.TextChoices):
    SUPERVISED = "supervised"
    AUTONOMOUS = "autonomous"


class TrustTier(models.TextChoices):
    TRUSTED = "trusted"
    READ_ONLY = "read_only"


class RunStatus(models.TextChoices):
    ACTIVE = "active"
    FINISHED = "finished"


class Run(models.Model):
    """One agent execution. Nothing frozen here changes after creation."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    org = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="runs")
    agent = models.CharField(max_length=100)
    source = models.JSONField(default=dict)
    invoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    policy_version = models.ForeignKey(PolicyVersion, on_delete=models.PROTECT, related_name="+")
    # Frozen with the version: with the version's id it keys the per-process cache of
    # versions, so the gate's run lookup does not join the versions table.
    policy_digest = models.CharField(max_length=64, editable=False)
    autonomy = models.CharField(max_length=12, choices=Autonomy.choices)
    trust_tier = models.CharField(max_length=12, choices=TrustTier.choices)
    budget_tokens = models.PositiveBigIntegerField()
    tool_set_digest = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.ACTIVE)
    session_token_hash = models.CharField(max_length=64, unique=True, editable=False)
    # Who asked for the run: an operator key's label or a person's username (shown to the
    # owner of a personal connection deciding whether this run may use it).
    created_by = models.CharField(max_length=200, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        # Every page naming the run shows it (a title, a related field, a list column): a
        # hidden character in the agent's name is an escape there, as everywhere else.
        return f"{escape_invisible(self.agent, layout_is_visible=False)} {str(self.id)[:8]}"

    @property
    def invoker_unconfirmed(self) -> bool:
        """Someone else (an operator key) named the invoker: their word, not the person's."""
        return bool(
            self.invoked_by_id
            and self.created_by
            and self.created_by != self.invoked_by.get_username()
        )


class FrozenTool(models.Model):
    """A tool as the run froze it: definition, schema guard verdict, and binding."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="frozen_tools")
    name = models.CharField(max_length=200)
    access = models.CharField(max_length=8, choices=Access.choices)
    match_argument = models.JSONField(null=True, blank=True)
    secrets = models.BooleanField(default=False)
    schema = models.JSONField(default=dict)
    definition_digest = models.CharField(max_length=64)
    callable = models.BooleanField(default=True)
    guard_error = models.CharField(max_length=300, blank=True)
    bundle_name = models.CharField(max_length=100, blank=True)
    connection = models.ForeignKey(
        Connection, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    upstream_name = models.CharField(max_length=128, blank=True)

    class Meta:
        ordering = ["run", "name"]
        constraints = [
            models.UniqueConstraint(fields=["run", "name"], name="frozen_tool_unique_name")
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_brokered(self) -> bool:
        return self.connection_id is not None


class BindingConsent(models.TextChoices):
    """Whether the owner of a personal connection agreed to a run using it."""

    NOT_NEEDED = "not_needed"  # a shared connection
    OWNER = "owner"  # the owner's own credential (personal key, portal session) made the run
    PENDING = "pending"  # someone else made it: the owner has not answered yet
    APPROVED = "approved"
    DENIED = "denied"


CONSENTED = (BindingConsent.NOT_NEEDED, BindingConsent.OWNER, BindingConsent.APPROVED)


class FrozenBinding(models.Model):
    """A run's binding to a connection: the generation and photograph it froze, and for a
    personal connection its owner's consent — the one thing here that moves after creation,
    once, from pending to approved or denied."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="bindings")
    connection = models.ForeignKey(Connection, on_delete=models.PROTECT, related_name="+")
    authorization_generation = models.PositiveIntegerField()
    photograph_digest = models.CharField(max_length=64)
    consent = models.CharField(
        max_length=12, choices=BindingConsent.choices, default=BindingConsent.NOT_NEEDED
    )
    consent_decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    consent_decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "connection"], name="frozen_binding_unique")
        ]

    def __str__(self) -> str:
        return f"{self.connection} (generation {self.authorization_generation})"
