"""Approvals as rows (read-only); deciding happens on the inbox page, through the service."""

from django.contrib import admin
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html

from governance.admin.roles import ReadOnlyAdmin
from governance.models import Approval
from governance.numerals import numeral
from governance.portal.verbatim import highlighted, person


@admin.register(Approval)
class ApprovalAdmin(ReadOnlyAdmin):
    org_path = "run__org"
    list_display = ("tool", "status", "agent", "connection", "expires_at", "decider", "open")
    list_filter = ("status", "remember_scope", "run__org")
    search_fields = ("tool", "tool_call_id", "=run__id")
    list_select_related = ("run", "connection", "decided_by")
    date_hierarchy = "created_at"

    def member_rows(self, request):
        return Q(connection__owner=request.user) | Q(run__invoked_by=request.user)

    @admin.display(description="agent")
    def agent(self, approval: Approval):
        return highlighted(approval.run.agent, layout_is_visible=False)

    @admin.display(description="decided by", ordering="decided_by__username")
    def decider(self, approval: Approval):
        return person(approval.decided_by)

    @admin.display(description="")
    def open(self, approval: Approval):
        url = reverse("admin:inbox-approval", args=[approval.pk])
        return format_html('<a href="{}">open</a>', url)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The approval page of the inbox is the one place an approval is shown in full."""
        if request.method == "GET" and numeral(str(object_id), 18) is not None:
            return HttpResponseRedirect(reverse("admin:inbox-approval", args=[object_id]))
        return super().change_view(request, object_id, form_url, extra_context)
