"""Changing a member's role or deactivating them from the portal."""

from django.db import transaction

from governance.errors import Invalid
from governance.models import Membership, Role


@transaction.atomic
def membership_update(*, membership: Membership, role: str, is_active: bool) -> Membership:
    """Set role and activity. Deactivation also makes the member's personal connections
    refuse (the gate re-checks the owner's membership on every call)."""
    if role not in Role.values:
        raise Invalid(f"role must be one of {', '.join(Role.values)}")
    Membership.objects.filter(pk=membership.pk).update(role=role, is_active=is_active)
    membership.refresh_from_db()
    return membership
