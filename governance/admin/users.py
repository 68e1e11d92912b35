"""Django's own user screens (superusers only), with fluidbox's rule for usernames: a new or
renamed account may not read like another's (`governance/usernames.py`), and an account the
ledger already names keeps its name."""

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from governance.models import Approval, Connection, FrozenBinding, PolicyVersion, Run
from governance.usernames import UsernameError, username_check, usernames_lock


def _checked(form, username: str) -> str:
    # Held until the admin's transaction ends, so the save below is covered too.
    usernames_lock()
    try:
        username_check(username, exclude_pk=form.instance.pk)
    except UsernameError as error:
        raise ValidationError(str(error)) from None
    return username


def named_in_records(user: User) -> bool:
    """Whether governance records or the ledger name this account (they keep the name it
    had then): a decision, a run it invoked, a consent, a policy version, a connection."""
    return (
        Approval.objects.filter(decided_by=user).exists()
        or Run.objects.filter(invoked_by=user).exists()
        or FrozenBinding.objects.filter(consent_decided_by=user).exists()
        or PolicyVersion.objects.filter(author=user).exists()
        or Connection.objects.filter(owner=user).exists()
    )


class UserAddForm(AdminUserCreationForm):
    def clean_username(self):
        username = super().clean_username()
        return _checked(self, username) if username else username


class UserEditForm(UserChangeForm):
    def clean_username(self):
        username = self.cleaned_data.get("username")
        if not username or username == self.instance.username:
            return username
        if named_in_records(self.instance):
            # Renamed, the old name would be free for someone else, and every past decision
            # recorded under it would read as theirs.
            raise ValidationError(
                f"{self.instance.username!r} is named in runs, decisions or the ledger, which "
                "keep the name it had: it cannot be renamed. Deactivate it and add a new "
                "account instead."
            )
        return _checked(self, username)


admin.site.unregister(User)


@admin.register(User)
class FluidboxUserAdmin(UserAdmin):
    add_form = UserAddForm
    form = UserEditForm

    def get_deleted_objects(self, objs, request):
        """An account records name is kept, as it is never renamed: deleted, the policy
        versions it saved would lose their author (the only record of who changed the
        rules). The delete page and the bulk action both list it as protected."""
        deleted, counts, permissions_needed, protected = super().get_deleted_objects(objs, request)
        kept = [
            f"{user.username!r} is named in runs, decisions or the ledger: deactivate it instead"
            for user in objs
            if named_in_records(user)
        ]
        return deleted, counts, permissions_needed, [*protected, *kept]
