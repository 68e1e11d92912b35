"""Organizations, memberships and API keys. A new key is shown once, in the answer to the
POST that made it; only its hint is ever shown again, never its hash."""

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.shortcuts import render

from governance.admin.roles import OrgScopedAdmin, org_ids_with
from governance.errors import ServiceError
from governance.models import ApiKey, Membership, Organization
from governance.portal.pages import page_context
from governance.portal.verbatim import person
from governance.services.memberships import membership_update
from governance.services.orgs import (
    api_key_create,
    api_key_revoke,
    org_allowed_hosts_set,
    org_create,
    user_create,
)
from governance.usernames import UsernameError, username_check, usernames_lock


@admin.register(Organization)
class OrganizationAdmin(OrgScopedAdmin):
    org_path = "pk"
    list_display = ("slug", "name", "members", "created_at")
    search_fields = ("slug", "name")
    fields = ("slug", "name", "connection_allowed_hosts")

    def get_readonly_fields(self, request, obj=None):
        # An organization's admins change only its connections' allowed hosts here, and only
        # superusers even those where FLUIDBOX_ORG_ADMINS_ALLOW_HOSTS is off.
        if obj is None:
            return ()
        if settings.FLUIDBOX_ORG_ADMINS_ALLOW_HOSTS or request.user.is_superuser:
            return ("slug", "name")
        return ("slug", "name", "connection_allowed_hosts")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(member_count=Count("memberships"))

    @admin.display(description="members", ordering="member_count")
    def members(self, org: Organization) -> int:
        return org.member_count

    def has_add_permission(self, request) -> bool:
        return request.user.is_superuser  # tenants are created by the operators of the site

    def has_change_permission(self, request, obj=None) -> bool:
        return self.may_manage(request, obj)

    def save_model(self, request, obj, form, change):
        if not change:
            org = org_create(slug=form.cleaned_data["slug"], name=form.cleaned_data["name"])
            obj.pk = org.pk
        org = Organization.objects.get(pk=obj.pk)
        org_allowed_hosts_set(
            org=org,
            text=form.cleaned_data.get("connection_allowed_hosts", org.connection_allowed_hosts),
            by=request.user,
        )


class MembershipForm(forms.ModelForm):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)
    password = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="For a new user only. Leave blank for someone who already has an account.",
    )

    # Who this admin may add with an existing account: people already in these
    # organizations, the ones they administer (None: anyone, for a superuser). Set per
    # request by `get_form`; read after the lock, so an account made a moment ago counts.
    addable_from_orgs: frozenset[int] | None = frozenset()

    class Meta:
        model = Membership
        fields = ("org", "role")

    def clean(self):
        data = super().clean()
        # Held until the admin's transaction ends: two admins adding the same name (or two
        # look-alikes) at once are checked one after the other, and the second is told.
        usernames_lock()
        username = data.get("username", "")
        existing = User.objects.filter(username=username).first()
        if existing is None and username:
            try:
                username_check(username, may_name=self.may_add)
            except UsernameError as error:
                self.add_error("username", str(error))
                return data
        # One organization's admin may not pull another's people (or a superuser) into it:
        # they never asked to be a member, and it would change what their session may do.
        # The name being taken is told anyway, as creating the account would fail on it.
        if existing is not None and not self.may_add(existing):
            raise forms.ValidationError(
                f"The username {existing.username!r} is taken, by someone who is in none of "
                "the organizations you administer. Choose another username; only a "
                "superuser adds an account of another organization."
            )
        # Setting the password of an existing account would let one org's admin take over
        # a user of another org; only their own password change does that.
        if existing is not None and data.get("password"):
            raise forms.ValidationError(
                f"{existing} already has an account; leave the password blank."
            )
        if (
            existing is not None
            and data.get("org")
            and existing.memberships.filter(org=data["org"]).exists()
        ):
            raise forms.ValidationError(f"{existing} is already a member of {data['org']}.")
        return data

    def may_add(self, user: User) -> bool:
        if self.addable_from_orgs is None:
            return True
        return user.memberships.filter(org_id__in=self.addable_from_orgs).exists()


class MembershipChangeForm(forms.ModelForm):
    class Meta:
        model = Membership
        fields = ("role", "is_active")


@admin.register(Membership)
class MembershipAdmin(OrgScopedAdmin):
    list_display = ("member", "org", "role", "is_active", "created_at")
    list_filter = ("role", "is_active", "org")
    search_fields = ("user__username", "user__email")
    list_select_related = ("user", "org")

    def get_form(self, request, obj=None, change=False, **kwargs):
        kwargs["form"] = MembershipChangeForm if obj is not None else MembershipForm
        form = super().get_form(request, obj, change=change, **kwargs)
        if obj is None:
            # A class made for this request by `modelform_factory`: setting it here is safe.
            form.addable_from_orgs = (
                None
                if request.user.is_superuser
                else frozenset(org_ids_with(request, self.manage_roles))
            )
        return form

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("org", "username", "email", "password", "role")
        return ("account", "org", "role", "is_active")

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and self.has_change_permission(request, obj):
            return ("account", "org")
        return ("account", *super().get_readonly_fields(request, obj))

    @admin.display(description="user", ordering="user__username")
    def member(self, membership: Membership):
        return person(membership.user)

    @admin.display(description="user")
    def account(self, membership: Membership):
        # Text, not the user's admin page: only superusers may open that one.
        return person(membership.user)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            membership_update(membership=obj, role=data["role"], is_active=data["is_active"])
            return
        user = user_create(
            username=data["username"],
            org=data["org"],
            role=data["role"],
            password=data.get("password") or None,
            email=data.get("email", ""),
        )
        saved = Membership.objects.get(org=data["org"], user=user)
        obj.pk, obj.user, obj.org = saved.pk, user, saved.org


class ApiKeyForm(forms.Form):
    org = forms.ModelChoiceField(queryset=Organization.objects.none(), label="Organization")
    name = forms.CharField(max_length=100)
    username = forms.CharField(
        required=False,
        max_length=150,
        label="Personal key of",
        help_text="Leave blank for an operator key (org-wide). A personal key acts as its "
        "holder, so only they may issue it: your own username, or blank.",
    )

    def __init__(self, *args, orgs, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["org"].queryset = orgs


@admin.register(ApiKey)
class ApiKeyAdmin(OrgScopedAdmin):
    list_display = ("name", "org", "kind", "holder", "hint_text", "created_at", "revoked_at")
    list_filter = ("org", ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("name", "user__username")
    list_select_related = ("org", "user")
    fields = ("org", "name", "holder", "hint_text", "created_at", "revoked_at")
    readonly_fields = fields
    actions = ["revoke_keys"]

    def member_rows(self, request):
        return Q(user=request.user)

    @admin.display(description="kind")
    def kind(self, key: ApiKey) -> str:
        return "personal" if key.is_personal else "operator"

    @admin.display(description="user")
    def holder(self, key: ApiKey):
        # Text, not the user's admin page: only superusers may open that one.
        return person(key.user) if key.user_id else "— (an operator key)"

    @admin.display(description="key")
    def hint_text(self, key: ApiKey) -> str:
        return f"{key.hint}…"

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_revoke_permission(self, request) -> bool:
        return self.may_manage(request)

    @admin.action(description="Revoke the selected keys", permissions=["revoke"])
    def revoke_keys(self, request, queryset):
        mine = set(org_ids_with(request, self.manage_roles))
        revoked = 0
        for key in queryset:
            if not (request.user.is_superuser or key.org_id in mine):
                raise PermissionDenied
            if key.revoked_at is None:
                api_key_revoke(key=key)
                revoked += 1
        messages.success(request, f"Revoked {revoked} key(s).")

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        orgs = Organization.objects.order_by("slug")
        if not request.user.is_superuser:
            orgs = orgs.filter(pk__in=org_ids_with(request, self.manage_roles))
        form = ApiKeyForm(request.POST or None, orgs=orgs)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            user = None
            if data["username"]:
                user = User.objects.filter(username=data["username"]).first()
            if data["username"] and user is None:
                form.add_error("username", "No such user.")
            elif user is not None and user != request.user:
                # A personal key acts as its holder: issued for someone else, it would let
                # an admin decide the calls on their personal connections, which only they may.
                form.add_error(
                    "username",
                    "A personal key acts as its holder: only they may issue it, signed in "
                    "as themselves.",
                )
            else:
                try:
                    issued = api_key_create(org=data["org"], name=data["name"], user=user)
                except ServiceError as error:
                    form.add_error(None, error.detail)
                else:
                    context = page_context(
                        request, "Copy the new key now", issued=issued, opts=self.opts
                    )
                    response = render(request, "portal/api_key_issued.html", context)
                    response["Cache-Control"] = "no-store"
                    return response
        context = page_context(request, "Add an API key", form=form, opts=self.opts)
        return render(
            request, "portal/api_key_add.html", context, status=400 if form.errors else 200
        )
