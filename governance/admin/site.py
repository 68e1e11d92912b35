"""The admin site: the approvals inbox under /admin/inbox/, and the dashboard on the index."""

from django.contrib import admin
from django.urls import path

from governance import vault
from governance.dashboard import dashboard_stats


class FluidboxAdminSite(admin.AdminSite):
    site_header = "fluidbox"
    site_title = "fluidbox portal"
    index_title = "Dashboard"
    index_template = "portal/dashboard_index.html"

    def get_urls(self):
        from governance.portal import bindings, inbox

        portal = [
            path("inbox/bindings/", self.admin_view(bindings.bindings_view), name="inbox-bindings"),
            path(
                "inbox/bindings/<int:binding_id>/decide/",
                self.admin_view(bindings.binding_decide_view),
                name="inbox-binding-decide",
            ),
            path("inbox/", self.admin_view(inbox.inbox_view), name="inbox"),
            path(
                "inbox/<int:approval_id>/",
                self.admin_view(inbox.approval_view),
                name="inbox-approval",
            ),
            path(
                "inbox/<int:approval_id>/decide/",
                self.admin_view(inbox.decide_view),
                name="inbox-decide",
            ),
        ]
        return portal + super().get_urls()

    def each_context(self, request):
        """The portal's top links: only the lists this user may open (a member has no
        policies to read, and a link to a 403 is a dead end)."""
        from governance.models import Connection, Policy, Run

        context = super().each_context(request)
        if not (request.user.is_active and request.user.is_staff):  # the sign-in page
            context["portal_lists"] = []
            return context
        lists = [("Runs", Run), ("Policies", Policy), ("Connections", Connection)]
        context["portal_lists"] = [
            (label, f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
            for label, model in lists
            if model in self._registry and self._registry[model].has_view_permission(request)
        ]
        return context

    def index(self, request, extra_context=None):
        from governance.admin.roles import portal_actor

        context = {
            "dashboard": dashboard_stats(portal_actor(request)),
            "vault_status": vault.tier2_status(),
            **(extra_context or {}),
        }
        return super().index(request, extra_context=context)


def install(site) -> None:
    """Make the default `admin.site` this class, as django-otp does with its OTPAdminSite.

    `fluidbox/urls.py` mounts `admin.site.urls` and every `@admin.register` targets that
    one instance, so swapping its class keeps a single site without touching settings.
    """
    site.__class__ = FluidboxAdminSite
