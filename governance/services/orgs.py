"""Organizations, users, memberships and API keys."""

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from governance.errors import Conflict, Forbidden, Invalid, NotFound
from governance.models import (
    API_KEY_PREFIX,
    ApiKey,
    Membership,
    Organization,
    Role,
    hash_secret_token,
    new_secret_token,
)
from governance.usernames import UsernameError, username_check, usernames_lock


@transaction.atomic
def org_create(*, slug: str, name: str = "") -> Organization:
    # The admin's form checks the slug as a SlugField; the command line must too: the slug
    # names the organization's ledger, which an offline verifier reads back (no spaces).
    field = Organization._meta.get_field("slug")
    try:
        field.run_validators(slug)
        if not slug:
            raise ValidationError("an organization needs a slug")
    except ValidationError as error:
        raise Invalid(
            f"{slug!r} is not a slug: letters, digits, '-' and '_', at most "
            f"{field.max_length} ({'; '.join(error.messages)})"
        ) from None
    if Organization.objects.filter(slug=slug).exists():
        raise Conflict(f"organization {slug!r} already exists")
    return Organization.objects.create(slug=slug, name=name or slug)


@transaction.atomic
def org_allowed_hosts_set(*, org: Organization, text: str, by: User | None = None) -> Organization:
    """The internal hosts this organization's connections may reach (governance/egress.py).

    `by`: the person changing it (None: a command at the server's terminal). With
    FLUIDBOX_ORG_ADMINS_ALLOW_HOSTS off, only a superuser may change it: in a deployment
    shared by tenants, an organization's admin must not open its internal network."""
    from governance.egress import AllowListError, allow_list_lines, parse_allow_list

    entries = allow_list_lines(text)
    try:
        parse_allow_list(entries)
    except AllowListError as error:
        raise Invalid(str(error)) from None
    unchanged = "\n".join(entries) == (org.connection_allowed_hosts or "")
    if not (unchanged or by is None or by.is_superuser or settings.FLUIDBOX_ORG_ADMINS_ALLOW_HOSTS):
        raise Forbidden(
            "only a superuser may change the hosts an organization's connections may reach "
            "here (FLUIDBOX_ORG_ADMINS_ALLOW_HOSTS is off)"
        )
    Organization.objects.filter(pk=org.pk).update(connection_allowed_hosts="\n".join(entries))
    org.refresh_from_db(fields=["connection_allowed_hosts"])
    return org


def org_get(slug: str) -> Organization:
    org = Organization.objects.filter(slug=slug).first()
    if org is None:
        raise NotFound(f"no organization {slug!r}")
    return org


@transaction.atomic
def user_create(
    *,
    username: str,
    org: Organization,
    role: str,
    password: str | None = None,
    email: str = "",
    is_superuser: bool = False,
) -> User:
    if role not in Role.values:
        raise Invalid(f"role must be one of {', '.join(Role.values)}")
    usernames_lock()
    user = User.objects.filter(username=username).first()
    if user is None:
        try:
            username_check(username)
        except UsernameError as error:
            raise Invalid(str(error), code="username") from None
        user = User(username=username, email=email, is_staff=True, is_superuser=is_superuser)
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save()
    else:
        if password:
            user.set_password(password)
        user.is_staff = True
        user.is_superuser = user.is_superuser or is_superuser
        user.save()
    Membership.objects.update_or_create(
        org=org, user=user, defaults={"role": role, "is_active": True}
    )
    return user


@transaction.atomic
def membership_set_active(*, org: Organization, user: User, is_active: bool) -> Membership:
    updated = Membership.objects.filter(org=org, user=user).update(is_active=is_active)
    if not updated:
        raise NotFound(f"{user} has no membership in {org}")
    return Membership.objects.get(org=org, user=user)


@dataclass(frozen=True)
class IssuedKey:
    key: ApiKey
    plaintext: str


@transaction.atomic
def api_key_create(*, org: Organization, name: str, user: User | None = None) -> IssuedKey:
    if user is not None and not Membership.objects.filter(org=org, user=user).exists():
        raise Invalid(f"{user} is not a member of {org}")
    plaintext = new_secret_token(API_KEY_PREFIX)
    key = ApiKey.objects.create(
        org=org,
        user=user,
        name=name,
        key_hash=hash_secret_token(plaintext),
        hint=plaintext[: len(API_KEY_PREFIX) + 4],
    )
    return IssuedKey(key=key, plaintext=plaintext)


@transaction.atomic
def api_key_revoke(*, key: ApiKey) -> ApiKey:
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key.refresh_from_db()
    return key
