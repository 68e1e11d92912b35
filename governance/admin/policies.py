"""Policies: the editor as the change page, YAML import as the add page; versions read-only."""

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse

from governance.admin.roles import OrgScopedAdmin, ReadOnlyAdmin, org_ids_with, portal_actor
from governance.errors import ServiceError
from governance.models import Organization, Policy, PolicyVersion
from governance.numerals import numeral
from governance.portal.pages import page_context
from governance.portal.policy_editor import policy_editor_view, policy_export_view
from governance.portal.policy_forms import YamlImportForm
from governance.portal.verbatim import person
from governance.services.policies import policy_save


@admin.register(Policy)
class PolicyAdmin(OrgScopedAdmin):
    list_display = ("name", "org", "version", "saved_at", "saved_by")
    list_filter = ("org",)
    search_fields = ("name",)
    list_select_related = ("org", "current_version__author")

    @admin.display(description="version")
    def version(self, policy: Policy):
        return f"v{policy.current_version.number}" if policy.current_version_id else "—"

    @admin.display(description="saved")
    def saved_at(self, policy: Policy):
        return policy.current_version.created_at if policy.current_version_id else None

    @admin.display(description="by")
    def saved_by(self, policy: Policy):
        version = policy.current_version
        return person(version.author) if version and version.author_id else "—"

    def get_urls(self):
        return [
            path(
                "<path:object_id>/export.yaml",
                self.admin_site.admin_view(self.export_view),
                name="governance_policy_export",
            ),
            *super().get_urls(),
        ]

    def _policy_or_404(self, request, object_id) -> Policy | None:
        policy = self.get_object(request, unquote(object_id))
        if policy is None or policy.current_version_id is None:
            return None
        return policy

    def change_view(self, request, object_id, form_url="", extra_context=None):
        policy = self._policy_or_404(request, object_id)
        if policy is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_view_permission(request, policy):
            raise PermissionDenied
        return policy_editor_view(
            request, policy, may_save=self.has_change_permission(request, policy)
        )

    def export_view(self, request, object_id):
        policy = self._policy_or_404(request, object_id)
        if policy is None or not self.has_view_permission(request, policy):
            raise PermissionDenied
        return policy_export_view(request, policy)

    def add_view(self, request, form_url="", extra_context=None):
        """Import YAML: a new policy, or a new version of the one it names."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        orgs = Organization.objects.order_by("slug")
        if not request.user.is_superuser:
            orgs = orgs.filter(pk__in=org_ids_with(request, self.manage_roles))
        form = YamlImportForm(request.POST or None, request.FILES or None, prefix="import")
        chosen = request.POST.get("org", "")
        problems: list[str] = []
        if request.method == "POST" and form.is_valid():
            number = numeral(chosen, 18)
            org = orgs.filter(pk=number).first() if number is not None else None
            if org is None:
                problems = ["Choose the organization the policy belongs to."]
            else:
                try:
                    version = policy_save(
                        org=org,
                        text=form.cleaned_data["yaml"],
                        author=portal_actor(request).user,
                        note="imported in the portal",
                    )
                except ServiceError as error:
                    problems = error.extra.get("failures") or [error.detail]
                else:
                    messages.success(request, f"Imported {version.policy.name} v{version.number}.")
                    return HttpResponseRedirect(
                        reverse("admin:governance_policy_change", args=[version.policy_id])
                    )
        context = page_context(
            request,
            "Import a policy from YAML",
            form=form,
            orgs=orgs,
            chosen=chosen,
            problems=problems,
            opts=self.opts,
        )
        return render(
            request, "portal/policy_import.html", context, status=400 if problems else 200
        )


@admin.register(PolicyVersion)
class PolicyVersionAdmin(ReadOnlyAdmin):
    org_path = "policy__org"
    list_display = ("policy", "number", "short_digest", "saved_by", "note", "created_at")
    list_filter = ("policy__org", "policy")
    list_select_related = ("policy", "author")
    fields = (
        "policy",
        "number",
        "digest",
        "autonomous_fallback",
        "approval_timeout",
        "author",
        "note",
        "created_at",
        "content",
    )
    readonly_fields = fields

    @admin.display(description="author", ordering="author__username")
    def saved_by(self, version: PolicyVersion):
        return person(version.author, "—")

    @admin.display(description="digest")
    def short_digest(self, version: PolicyVersion) -> str:
        return version.digest[:12]
