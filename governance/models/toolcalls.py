"""One record per gate request: what was asked and how it was settled."""

from django.db import models

from governance.policy.invisible import escape_invisible

from .runs import Run


class Decision(models.TextChoices):
    ALLOW = "allow"
    DENY = "deny"
    PENDING = "pending"


class Source(models.TextChoices):
    BUDGET = "budget"
    CAPABILITY = "capability"
    BINDING = "binding"
    SCHEMA = "schema"
    TRUST_TIER = "trust_tier"
    POLICY = "policy"
    APPROVAL = "approval"


class BrokerStatus(models.TextChoices):
    NOT_BROKERED = ""
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    TOOL_ERROR = "tool_error"
    FAILED = "failed"
    REFUSED = "refused"


class ToolCall(models.Model):
    """The settled answer for `(run, session_id, tool_call_id)`; serves retries and replay."""

    # No index of its own: the unique (run, session_id, tool_call_id) index and the
    # (run, decision) index both start with it, and every decision writes this table.
    run = models.ForeignKey(
        Run, on_delete=models.CASCADE, related_name="tool_calls", db_index=False
    )
    session_id = models.CharField(max_length=200)
    tool_call_id = models.CharField(max_length=200)
    tool = models.CharField(max_length=200)
    arguments = models.JSONField()
    arguments_digest = models.CharField(max_length=64)
    call_key = models.TextField()
    decision = models.CharField(max_length=8, choices=Decision.choices)
    source = models.CharField(max_length=12, choices=Source.choices, blank=True)
    reason = models.TextField(blank=True)
    rule = models.JSONField(null=True, blank=True)
    original_verdict = models.CharField(max_length=20, blank=True)
    tool_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    broker_status = models.CharField(
        max_length=12, choices=BrokerStatus.choices, blank=True, default=BrokerStatus.NOT_BROKERED
    )
    broker_result_digest = models.CharField(max_length=64, blank=True)
    broker_is_error = models.BooleanField(null=True, blank=True)
    broker_latency_ms = models.PositiveIntegerField(null=True, blank=True)
    broker_error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "session_id", "tool_call_id"], name="tool_call_unique_ids"
            )
        ]
        indexes = [models.Index(fields=["run", "decision"])]

    def __str__(self) -> str:
        # A page title and breadcrumb show it: the name an MCP client sent may hide characters.
        return f"{escape_invisible(self.tool, layout_is_visible=False)} ({self.decision})"
