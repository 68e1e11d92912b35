"""Who may see and change what in the portal: org roles, enforced on the server by every admin.

A portal user acts through an `Actor` built like `PortalSessionAuthentication` builds one,
except that a Django superuser is an admin of every organization. The owner rule for
personal connections lives in the services and selectors, so it holds for superusers too.
"""

import re

from django.contrib import admin
from django.contrib.admin import helpers
from django.contrib.admin.utils import get_fields_from_path
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpResponseBadRequest

from governance.admin.changelists import BoundedChangeList
from governance.authentication import Actor
from governance.authentication import portal_actor as actor_for_portal_user
from governance.models import Organization, Role

READ_ROLES = (Role.ADMIN, Role.APPROVER, Role.AUDITOR)
MANAGE_ROLES = (Role.ADMIN,)
# What the sidebar's filters and the date hierarchy put after their field in the query string
# (`org__id__exact`, `revoked_at__isempty`, `created_at__year`).
FILTER_SUFFIX = re.compile(r"(__(id|pk))?(__(exact|isnull|isempty|gte|lt|year|month|day))?")


def portal_actor(request) -> Actor:
    """The request's user as an Actor, computed once per request."""
    cached = getattr(request, "_fluidbox_actor", None)
    if cached is not None and cached.user == request.user:
        return cached
    actor = actor_for_portal_user(request.user)
    request._fluidbox_actor = actor
    return actor


def org_ids_with(request, roles) -> list[int]:
    return sorted(org for org, role in portal_actor(request).roles.items() if role in roles)


class OrgScopedAdmin(admin.ModelAdmin):
    """Rows scoped to the user's organizations; changes only for the roles in `manage_roles`.

    `org_path` is the lookup from the model to its Organization. `member_rows` lets members
    see the rows that are theirs (personal connections, runs they invoked).
    """

    org_path = "org"
    view_roles = READ_ROLES
    manage_roles = MANAGE_ROLES
    read_only = False
    hidden_from_index = False
    actions = None

    def member_rows(self, request) -> Q | None:
        return None

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        visible = Q(**{f"{self.org_path}__in": org_ids_with(request, self.view_roles)})
        mine = self.member_rows(request)
        if mine is not None:
            member_orgs = org_ids_with(request, tuple(Role.values))
            visible |= mine & Q(**{f"{self.org_path}__in": member_orgs})
        return queryset.filter(visible)

    def get_list_filter(self, request):
        # Django's filter on a relation offers every row of the related table, every
        # tenant's (the names of all organizations, all policies): offer only the values
        # that rows this user may see hold.
        return [
            (item, admin.RelatedOnlyFieldListFilter)
            if isinstance(item, str) and get_fields_from_path(self.model, item)[-1].is_relation
            else item
            for item in super().get_list_filter(request)
        ]

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        """Only what the sidebar's filters and the date hierarchy send. Django also takes any
        lookup on the model's own columns (`?key_hash__startswith=5`, `?url__contains=:pw@`),
        and the row count then reads out a column no page shows, a character at a time."""
        offered = {self.date_hierarchy} if self.date_hierarchy else set()
        for item in self.get_list_filter(request):
            if isinstance(item, type):
                offered.add(item.parameter_name)
            else:
                offered.add(item[0] if isinstance(item, (list, tuple)) else item)
        return any(
            lookup == path
            or (
                lookup.startswith(path + LOOKUP_SEP)
                and FILTER_SUFFIX.fullmatch(lookup.removeprefix(path))
            )
            for path in offered
        )

    def get_changelist(self, request, **kwargs):
        return BoundedChangeList

    def response_action(self, request, queryset):
        # Django filters the list by the ids as posted: one the primary key cannot read
        # (`abc`, a NUL) raised a ValueError there, a 500. Nothing is done with such a list.
        try:
            for value in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME):
                self.model._meta.pk.to_python(value)
        except ValidationError:
            return HttpResponseBadRequest(
                "the selected rows are not rows of this list", content_type="text/plain"
            )
        return super().response_action(request, queryset)

    def org_of(self, obj) -> int | None:
        value = self.model._base_manager.filter(pk=obj.pk).values_list(self.org_path, flat=True)
        return value.first()

    def _may_view_any(self, request) -> bool:
        if request.user.is_superuser:
            return True
        if org_ids_with(request, self.view_roles):
            return True
        return self.member_rows(request) is not None and bool(portal_actor(request).roles)

    def has_module_permission(self, request) -> bool:
        return request.user.is_active and self._may_view_any(request)

    def has_view_permission(self, request, obj=None) -> bool:
        if obj is None:
            return self._may_view_any(request)
        return self.get_queryset(request).filter(pk=obj.pk).exists()

    def may_manage(self, request, obj=None) -> bool:
        """Admin of the object's org (or of any org when there is no object)."""
        if self.read_only:
            return False
        if request.user.is_superuser:
            return True
        orgs = org_ids_with(request, self.manage_roles)
        if obj is None:
            return bool(orgs)
        return self.org_of(obj) in orgs

    def has_add_permission(self, request) -> bool:
        return self.may_manage(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self.may_manage(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        # Nothing governed is deleted from the portal: keys and connections are revoked,
        # memberships deactivated, policies versioned. Deleting would bypass the services.
        return False

    def get_model_perms(self, request):
        if self.hidden_from_index:
            return {}
        return super().get_model_perms(request)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.remote_field.model is Organization and not request.user.is_superuser:
            kwargs["queryset"] = Organization.objects.filter(
                pk__in=org_ids_with(request, self.manage_roles)
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ReadOnlyAdmin(OrgScopedAdmin):
    """Records nobody changes from the portal, superusers included: the ledger, frozen runs."""

    read_only = True

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
