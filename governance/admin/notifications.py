"""Notification channels (the signing secret is write-only) and their deliveries."""

from django import forms
from django.contrib import admin

from governance.admin.roles import OrgScopedAdmin, ReadOnlyAdmin
from governance.admin.url_fields import address_checked
from governance.errors import Invalid
from governance.models import ChannelKind, NotificationChannel, NotificationDelivery
from governance.portal.verbatim import url_shown
from governance.services.channels import channel_create, channel_update, webhook_url_check


class ChannelForm(forms.ModelForm):
    url = forms.URLField(required=False, max_length=500, assume_scheme="https")
    secret = forms.CharField(
        required=False,
        strip=False,
        label="Signing secret",
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Webhooks: the HMAC-SHA256 key. Sealed at once and never shown again; "
        "leave blank to keep the current one.",
    )

    class Meta:
        model = NotificationChannel
        fields = ("org", "name", "kind", "url", "emails", "is_active")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            # A URL stored with a password in it: the box shows `***` in its place, and
            # saving it as it is asks for a URL without one.
            self.initial["url"] = url_shown(self.instance.url)

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        if url:
            try:
                webhook_url_check(url)
            except Invalid as error:
                raise forms.ValidationError(error.detail) from None
        return url

    def clean(self):
        data = super().clean()
        kind = self.instance.kind if self.instance.pk else data.get("kind")
        if kind == ChannelKind.WEBHOOK:
            if not data.get("url"):
                self.add_error("url", "A webhook needs a URL.")
            if not self.instance.pk and not data.get("secret"):
                self.add_error("secret", "A webhook needs a signing secret.")
            address_checked(self, data)
        elif kind == ChannelKind.EMAIL:
            lines = [line.strip() for line in data.get("emails", "").splitlines() if line.strip()]
            if not lines or any("@" not in line for line in lines):
                self.add_error("emails", "One email address per line.")
        return data


@admin.register(NotificationChannel)
class NotificationChannelAdmin(OrgScopedAdmin):
    form = ChannelForm
    list_display = ("name", "kind", "org", "destination", "is_active")
    list_filter = ("kind", "is_active", "org")
    search_fields = ("name",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("secret_sealed")

    @admin.display(description="to")
    def destination(self, channel: NotificationChannel) -> str:
        return url_shown(channel.url) or ", ".join(channel.emails.split())

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if obj is not None and not self.has_change_permission(request, obj):
            # Read-only, the admin would show the column itself, a password in it included.
            return [name for name in fields if name not in ("url", "emails", "secret")] + [
                "destination"
            ]
        return fields

    def get_readonly_fields(self, request, obj=None):
        return ("org", "kind", "destination") if obj is not None else ()

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            channel_update(
                channel=obj,
                name=data["name"],
                is_active=data["is_active"],
                url=data.get("url", ""),
                emails=data.get("emails", ""),
                new_secret=data.get("secret", ""),
            )
            return
        channel = channel_create(
            org=data["org"],
            name=data["name"],
            kind=data["kind"],
            url=data.get("url", ""),
            secret=data.get("secret", ""),
            emails=data.get("emails", ""),
        )
        obj.pk = channel.pk


@admin.register(NotificationDelivery)
class NotificationDeliveryAdmin(ReadOnlyAdmin):
    org_path = "channel__org"
    list_display = ("channel", "approval", "status", "attempts", "last_error", "sent_at")
    list_filter = ("status",)
    list_select_related = ("channel", "approval")
    readonly_fields = (
        "channel",
        "approval",
        "status",
        "attempts",
        "last_error",
        "created_at",
        "sent_at",
    )
