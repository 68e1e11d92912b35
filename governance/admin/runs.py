"""Runs and what they froze, tool calls and budgets: read-only for everyone, superusers too.

A run's page is its timeline; every POST to it is refused.
"""

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.urls import path, reverse
from django.utils.html import format_html

from governance.admin.roles import READ_ROLES, ReadOnlyAdmin, org_ids_with
from governance.models import (
    BudgetReservation,
    FrozenBinding,
    FrozenTool,
    Run,
    RunBudget,
    RunGrant,
    ToolCall,
    UsageEntry,
)
from governance.portal.timeline import run_export_view, run_timeline_view
from governance.portal.verbatim import arguments_html, highlighted, person


class RunScopedAdmin(ReadOnlyAdmin):
    """Rows that belong to a run: visible to org staff, and to the member who invoked it."""

    org_path = "run__org"

    def member_rows(self, request):
        return Q(run__invoked_by=request.user)


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = (
        "short_id",
        "agent_shown",
        "org",
        "status",
        "autonomy",
        "trust_tier",
        "policy_version",
        "invoker",
        "created_at",
    )
    list_filter = ("status", "autonomy", "trust_tier", "org")
    search_fields = ("agent", "=id")
    list_select_related = ("org", "policy_version__policy", "invoked_by")
    date_hierarchy = "created_at"

    def member_rows(self, request):
        return Q(invoked_by=request.user)

    @admin.display(description="agent", ordering="agent")
    def agent_shown(self, run: Run):
        return highlighted(run.agent, layout_is_visible=False)

    @admin.display(description="invoked by", ordering="invoked_by__username")
    def invoker(self, run: Run):
        return person(run.invoked_by)

    @admin.display(description="run", ordering="id")
    def short_id(self, run: Run) -> str:
        return str(run.pk)[:8]

    def get_urls(self):
        return [
            path(
                "<path:object_id>/export.jsonl",
                self.admin_site.admin_view(self.export_view),
                name="governance_run_export",
            ),
            *super().get_urls(),
        ]

    def _visible_run(self, request, object_id) -> Run:
        run = self.get_object(request, unquote(object_id))
        if run is None or not self.has_view_permission(request, run):
            raise PermissionDenied
        return run

    def change_view(self, request, object_id, form_url="", extra_context=None):
        if request.method != "GET":
            raise PermissionDenied("runs are read-only")
        run = self.get_object(request, unquote(object_id))
        if run is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_view_permission(request, run):
            raise PermissionDenied
        whole_org = request.user.is_superuser or run.org_id in org_ids_with(request, READ_ROLES)
        return run_timeline_view(request, run, whole_org=whole_org)

    def export_view(self, request, object_id):
        return run_export_view(request, self._visible_run(request, object_id))


@admin.register(ToolCall)
class ToolCallAdmin(RunScopedAdmin):
    list_display = ("tool_shown", "decision", "source", "run_link", "call_id_shown", "created_at")
    list_filter = ("decision", "source", "broker_status", "run__org")
    search_fields = ("tool", "tool_call_id", "=run__id")
    list_select_related = ("run",)
    date_hierarchy = "created_at"
    fields = (
        "run",
        "session_id_shown",
        "call_id_shown",
        "tool_shown",
        "arguments_verbatim",
        "arguments_digest",
        "call_key_verbatim",
        "decision",
        "source",
        "reason",
        "rule",
        "original_verdict",
        "tool_error",
        "created_at",
        "decided_at",
        "broker_status",
        "broker_result_digest",
        "broker_is_error",
        "broker_latency_ms",
        "broker_error",
    )
    readonly_fields = fields

    @admin.display(description="run")
    def run_link(self, call: ToolCall):
        url = reverse("admin:governance_run_change", args=[call.run_id])
        return format_html('<a href="{}">{}</a>', url, str(call.run_id)[:8])

    # The runner writes these (an MCP client may name any tool): their hidden characters are
    # marked, as everywhere else the portal shows what an agent wrote.
    @admin.display(description="tool", ordering="tool")
    def tool_shown(self, call: ToolCall):
        return highlighted(call.tool, layout_is_visible=False)

    @admin.display(description="tool call id", ordering="tool_call_id")
    def call_id_shown(self, call: ToolCall):
        return highlighted(call.tool_call_id, layout_is_visible=False)

    @admin.display(description="session id")
    def session_id_shown(self, call: ToolCall):
        return highlighted(call.session_id, layout_is_visible=False)

    @admin.display(description="arguments")
    def arguments_verbatim(self, call: ToolCall):
        return format_html("<pre class='fb-code'>{}</pre>", arguments_html(call.arguments))

    @admin.display(description="call key")
    def call_key_verbatim(self, call: ToolCall):
        return format_html(
            "<code class='fb-code'>{}</code>", highlighted(call.call_key, layout_is_visible=False)
        )


@admin.register(FrozenTool)
class FrozenToolAdmin(RunScopedAdmin):
    hidden_from_index = True
    list_display = ("name", "run", "access", "secrets", "callable", "definition_digest")
    list_filter = ("access", "secrets", "callable")
    fields = (
        "run",
        "name",
        "access",
        "secrets",
        "match_argument",
        "definition_digest",
        "callable",
        "guard_error",
        "bundle_name",
        "connection",
        "upstream_name",
        "schema",
    )
    readonly_fields = fields


@admin.register(FrozenBinding)
class FrozenBindingAdmin(RunScopedAdmin):
    hidden_from_index = True
    list_display = ("connection", "run", "authorization_generation", "photograph_digest")
    readonly_fields = ("run", "connection", "authorization_generation", "photograph_digest")


@admin.register(RunGrant)
class RunGrantAdmin(RunScopedAdmin):
    hidden_from_index = True
    list_display = ("call_key_shown", "run", "policy_version", "arguments_digest", "created_at")
    fields = (
        "run",
        "call_key_shown",
        "arguments_digest",
        "tool_definition_digest",
        "policy_version",
        "approval",
        "created_at",
    )
    readonly_fields = fields

    @admin.display(description="call key", ordering="call_key")
    def call_key_shown(self, grant: RunGrant):
        # the agent's words: a bidi override must not reorder what was granted on screen
        return format_html(
            "<code class='fb-code'>{}</code>", highlighted(grant.call_key, layout_is_visible=False)
        )


@admin.register(RunBudget)
class RunBudgetAdmin(RunScopedAdmin):
    hidden_from_index = True
    list_display = ("run", "allowance", "spent", "outstanding", "remaining")
    readonly_fields = ("run", "allowance", "spent", "outstanding")


@admin.register(BudgetReservation)
class BudgetReservationAdmin(RunScopedAdmin):
    list_display = ("key_shown", "run", "reserved_tokens", "status", "expires_at", "created_at")
    list_filter = ("status",)
    fields = ("run", "key_shown", "reserved_tokens", "status", "expires_at", "created_at")
    readonly_fields = fields

    @admin.display(description="request key", ordering="request_key")
    def key_shown(self, reservation: BudgetReservation):
        return highlighted(reservation.request_key, layout_is_visible=False)  # the runner's


@admin.register(UsageEntry)
class UsageEntryAdmin(RunScopedAdmin):
    list_display = ("run", "input_tokens", "output_tokens", "cost_usd", "external_id", "created_at")
    readonly_fields = (
        "run",
        "external_id",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "created_at",
    )
