"""The ledger in the admin: read-only for everyone, superusers included."""

import json

from django.contrib import admin
from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html

from governance.admin.roles import ReadOnlyAdmin
from governance.portal.verbatim import highlighted
from ledger.models import Event


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    org_path = "run__org"
    list_display = ("seq", "type", "run_link", "decision", "tool", "at")
    list_filter = ("type", "run__org")
    search_fields = ("=run__id", "type")
    list_select_related = ("run",)
    date_hierarchy = "at"
    fields = ("run", "seq", "type", "at", "pretty_data", "prev_hash", "hash")
    readonly_fields = fields
    show_full_result_count = False

    def member_rows(self, request):
        return Q(run__invoked_by=request.user)

    @admin.display(description="run")
    def run_link(self, event: Event):
        url = reverse("admin:governance_run_change", args=[event.run_id])
        return format_html('<a href="{}">{}</a>', url, str(event.run_id)[:8])

    @admin.display(description="decision")
    def decision(self, event: Event) -> str:
        data = event.data if isinstance(event.data, dict) else {}
        return data.get("decision") or data.get("outcome") or data.get("status") or ""

    @admin.display(description="tool")
    def tool(self, event: Event) -> str:
        data = event.data if isinstance(event.data, dict) else {}
        return data.get("tool") or ""

    @admin.display(description="data")
    def pretty_data(self, event: Event):
        text = json.dumps(event.data, ensure_ascii=False, indent=2, sort_keys=True)
        return format_html('<pre class="fb-code">{}</pre>', highlighted(text))
