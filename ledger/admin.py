"""The ledger in the admin: read-only for everyone, superusers included."""

import json

from django import forms
from django.contrib import admin
from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html

from governance.admin.roles import OrgScopedAdmin, ReadOnlyAdmin
from governance.admin.url_fields import address_checked
from governance.errors import Invalid
from governance.portal.verbatim import highlighted, url_shown
from ledger.models import AuditSink, Event, SinkKind
from ledger.sinks import sink_create, sink_token_check, sink_update, sink_url_check
from ledger.streaming import sink_lag


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
    def tool(self, event: Event):
        data = event.data if isinstance(event.data, dict) else {}
        tool = data.get("tool")
        return highlighted(tool, layout_is_visible=False) if isinstance(tool, str) else ""

    @admin.display(description="data")
    def pretty_data(self, event: Event):
        text = json.dumps(event.data, ensure_ascii=False, indent=2, sort_keys=True)
        return format_html('<pre class="fb-code">{}</pre>', highlighted(text))


class AuditSinkForm(forms.ModelForm):
    token = forms.CharField(
        required=False,
        strip=False,
        label="Token",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Splunk HEC: the HEC token (required). JSON lines: an optional bearer token. "
        "Sealed at once and never shown again; leave blank to keep the current one. It is "
        "only sent to the URL it was entered with: changing the URL needs it again.",
    )

    class Meta:
        model = AuditSink
        fields = ("org", "name", "kind", "url", "is_active", "max_backlog")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            # A sink made before passwords in URLs were refused: the box shows `***` in
            # their place, and saving it as it is asks for a URL without them.
            self.initial["url"] = url_shown(self.instance.url)

    def clean_url(self):
        try:
            return sink_url_check(self.cleaned_data["url"])
        except Invalid as error:
            raise forms.ValidationError(error.detail) from None

    def clean_token(self):
        try:
            return sink_token_check(self.cleaned_data["token"])
        except Invalid as error:
            raise forms.ValidationError(error.detail) from None

    def clean(self):
        data = super().clean()
        kind = self.instance.kind if self.instance.pk else data.get("kind")
        creating = not self.instance.pk
        if kind == SinkKind.SPLUNK_HEC and creating and not data.get("token"):
            self.add_error("token", "A Splunk HEC sink needs its HEC token.")
        address_checked(self, data)
        if (
            not creating
            and data.get("url")
            and not data.get("token")
            and "token" not in self.errors
        ):
            # The sink as it is now, locked until this save ends (the admin's change view is
            # one transaction): another admin's change since the page loaded is seen here, as
            # sink_update would see it, and answered as a form error rather than refused there.
            now = AuditSink.objects.select_for_update().filter(pk=self.instance.pk)
            url, sealed = now.values_list("url", "token_sealed").first() or ("", "")
            if sealed and data["url"] != url:
                self.add_error(
                    "token",
                    "Enter the token again: the stored one is only sent to the URL it was "
                    "entered with.",
                )
        return data


@admin.register(AuditSink)
class AuditSinkAdmin(OrgScopedAdmin):
    """Where each organization's ledger is streamed; delivery state beside the settings."""

    form = AuditSinkForm
    list_display = (
        "name",
        "org",
        "kind",
        "destination",
        "is_active",
        "lag",
        "delivered_events",
        "dropped_events",
        "failed_attempts",
        "last_success_at",
        "last_error",
    )
    list_filter = ("kind", "is_active", "org")
    list_select_related = ("org",)
    readonly_fields = (
        "lag",
        "delivered_events",
        "dropped_events",
        "failed_attempts",
        "consecutive_failures",
        "next_attempt_at",
        "last_success_at",
        "last_error",
        "last_error_at",
    )

    def get_queryset(self, request):
        return super().get_queryset(request).defer("token_sealed")

    def get_fields(self, request, obj=None):
        fields = ["org", "name", "kind", "url", "token", "is_active", "max_backlog"]
        if obj is None:
            return fields
        if not self.has_change_permission(request, obj):
            # Read-only, the admin would show the column itself, a password in it included.
            fields = ["org", "name", "kind", "destination", "is_active", "max_backlog"]
        return [*fields, *self.readonly_fields]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return ("org", "name", "kind", "destination", *self.readonly_fields)

    @admin.display(description="URL")
    def destination(self, sink: AuditSink) -> str:
        return url_shown(sink.url)

    @admin.display(description="lag (events)")
    def lag(self, sink: AuditSink) -> int:
        return sink_lag(sink)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            sink_update(
                sink=obj,
                url=data["url"],
                is_active=data["is_active"],
                max_backlog=data["max_backlog"],
                new_token=data.get("token", ""),
            )
            return
        sink = sink_create(
            org=data["org"],
            name=data["name"],
            kind=data["kind"],
            url=data["url"],
            token=data.get("token", ""),
            is_active=data["is_active"],
            max_backlog=data["max_backlog"],
        )
        obj.pk = sink.pk
