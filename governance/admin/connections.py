"""Connections, agent secrets and the vault keyring. No sealed column is ever a field here."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from governance import vault
from governance.admin.roles import OrgScopedAdmin, org_ids_with
from governance.models import AgentSecret, Connection, Organization, Role, VaultKeyring
from governance.portal.connections import (
    connection_action,
    connection_create_view,
    connection_page,
)
from governance.portal.verbatim import person
from governance.services.agent_secrets import agent_secret_set

CREATOR_ROLES = (Role.ADMIN, Role.APPROVER, Role.MEMBER)


@admin.register(Connection)
class ConnectionAdmin(OrgScopedAdmin):
    list_display = (
        "slug",
        "org",
        "kind",
        "owned_by",
        "transport",
        "status",
        "authorization_generation",
        "tool_count",
        "photographed_at",
    )
    list_filter = ("status", "kind", "transport", "org")
    # Not the URL: one stored with a password in it would answer a search a letter at a time.
    search_fields = ("slug",)
    list_select_related = ("org", "owner")
    # The list never loads the sealed credential either.
    list_display_links = ("slug",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("credential_sealed")

    def member_rows(self, request):
        return Q(kind="personal", owner=request.user)

    @admin.display(description="owner", ordering="owner__username")
    def owned_by(self, connection: Connection):
        return person(connection.owner)

    @admin.display(description="tools")
    def tool_count(self, connection: Connection) -> int:
        return len(connection.photograph or [])

    def has_add_permission(self, request) -> bool:
        # Anyone but an auditor may add their own personal connection (auditors change
        # nothing in the portal); the service checks the rest.
        return request.user.is_superuser or bool(org_ids_with(request, CREATOR_ROLES))

    def has_change_permission(self, request, obj=None) -> bool:
        # No model form edits a connection: every change is an action through a service.
        return False

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path(
                "<path:object_id>/do/<str:action>/",
                view(require_POST(self.action_view)),
                name="governance_connection_action",
            ),
            *super().get_urls(),
        ]

    def _visible(self, request, object_id) -> Connection | None:
        connection = self.get_object(request, unquote(object_id))
        if connection is not None and not self.has_view_permission(request, connection):
            raise PermissionDenied
        return connection

    def change_view(self, request, object_id, form_url="", extra_context=None):
        if request.method != "GET":
            raise PermissionDenied("use the refresh, reconnect and revoke actions")
        connection = self._visible(request, object_id)
        if connection is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        return connection_page(request, connection)

    def action_view(self, request, object_id, action):
        if action not in ("refresh", "reconnect", "revoke"):
            raise PermissionDenied("unknown action")
        connection = self._visible(request, object_id)
        if connection is None:
            raise PermissionDenied
        return connection_action(request, connection, action)

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        orgs = Organization.objects.order_by("slug")
        if not request.user.is_superuser:
            orgs = orgs.filter(pk__in=org_ids_with(request, CREATOR_ROLES))
        return connection_create_view(request, orgs)


class AgentSecretForm(forms.ModelForm):
    value = forms.CharField(
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Sealed at once; never shown again.",
    )

    class Meta:
        model = AgentSecret
        fields = ("org", "agent", "name")

    def clean(self):
        # Said on the form: `agent_secret_set` refusing in `save_model` would be a 500, and
        # DEBUG's page for it prints the value just typed.
        if vault.tier2_status() == "sealed":
            raise forms.ValidationError(vault.SEALED_REFUSAL)
        return super().clean()

    def _post_clean(self):
        # Adding an existing (org, agent, name) replaces its value: `agent_secret_set`
        # upserts, so the model's uniqueness check must not refuse it here.
        pass


@admin.register(AgentSecret)
class AgentSecretAdmin(OrgScopedAdmin):
    form = AgentSecretForm
    list_display = ("name", "agent", "org", "created_at")
    list_filter = ("org",)
    search_fields = ("name", "agent")

    def get_queryset(self, request):
        return super().get_queryset(request).defer("value_sealed")

    def has_change_permission(self, request, obj=None) -> bool:
        # Set a new value by adding the same name again; the old one is never shown.
        return False

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        saved = agent_secret_set(
            org=data["org"], name=data["name"], value=data["value"], agent=data["agent"]
        )
        obj.pk, obj.org, obj.agent, obj.name = saved.pk, saved.org, saved.agent, saved.name

    def response_add(self, request, obj, post_url_continue=None):
        messages.success(request, f"Sealed {obj}.")
        return HttpResponseRedirect(reverse("admin:governance_agentsecret_changelist"))


@admin.register(VaultKeyring)
class VaultKeyringAdmin(admin.ModelAdmin):
    """Superusers only; the wrapped keys and the salt are not shown."""

    list_display = ("name", "passphrase_protected", "rotated_at", "status")
    fields = ("name", "passphrase_protected", "rotated_at", "status")
    readonly_fields = fields
    actions = None

    @admin.display(description="tier 2 status")
    def status(self, ring: VaultKeyring) -> str:
        return vault.tier2_status()

    def has_module_permission(self, request) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
