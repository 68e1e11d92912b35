"""Paused tool calls awaiting a human, and the grants Approve & Remember leaves behind."""

from django.conf import settings
from django.db import models

from governance.policy.invisible import escape_invisible

from .connections import Connection
from .policies import PolicyVersion
from .runs import Run
from .toolcalls import ToolCall


class ApprovalStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    TIMED_OUT = "timed_out"


class RememberScope(models.TextChoices):
    """What Approve & Remember keeps: nothing, this exact call for the rest of the run, or
    that plus a policy rule for future runs (which sees only `tool:match_string`)."""

    NONE = "", "not remembered"
    RUN = "run", "this exact call, for the rest of this run"
    POLICY = "policy", "this exact call for this run, and a policy rule for future runs"


class Approval(models.Model):
    """The source of truth for a paused call; settled once, by compare-and-swap."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="approvals")
    call = models.OneToOneField(ToolCall, on_delete=models.CASCADE, related_name="approval")
    session_id = models.CharField(max_length=200)
    tool_call_id = models.CharField(max_length=200)
    tool = models.CharField(max_length=200)
    call_key = models.TextField()
    tool_definition_digest = models.CharField(max_length=64)
    policy_version = models.ForeignKey(PolicyVersion, on_delete=models.PROTECT, related_name="+")
    connection = models.ForeignKey(
        Connection, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    rule = models.JSONField(null=True, blank=True)
    status = models.CharField(
        max_length=10, choices=ApprovalStatus.choices, default=ApprovalStatus.PENDING
    )
    expires_at = models.DateTimeField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    remember = models.BooleanField(default=False)
    remember_scope = models.CharField(
        max_length=8, choices=RememberScope.choices, blank=True, default=RememberScope.NONE
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "session_id", "tool_call_id"], name="approval_unique_ids"
            )
        ]
        indexes = [models.Index(fields=["status", "expires_at"])]

    def __str__(self) -> str:
        return f"{self.tool} ({self.status})"


class RunGrant(models.Model):
    """Approve & Remember within a run: this exact call (its full arguments, by digest), this
    tool definition, this policy version. A grant made before arguments were bound has an
    empty digest and matches nothing: it asks again rather than cover more than was seen."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="grants")
    call_key = models.TextField()
    arguments_digest = models.CharField(max_length=64, default="")
    tool_definition_digest = models.CharField(max_length=64)
    policy_version = models.ForeignKey(PolicyVersion, on_delete=models.PROTECT, related_name="+")
    approval = models.ForeignKey(Approval, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        # A page title and breadcrumb show it: the agent wrote the call key.
        return escape_invisible(self.call_key[:80], layout_is_visible=False)
