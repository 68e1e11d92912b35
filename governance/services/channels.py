"""Notification channels: created and changed from the portal; the webhook secret is sealed
under the machine key and never read back out except to sign."""

from django.db import transaction

from governance import vault
from governance.egress import url_address_refused, url_credentials_refused
from governance.errors import Invalid
from governance.models import ChannelKind, NotificationChannel, Organization


def _recipients(emails: str) -> str:
    lines = [line.strip() for line in emails.splitlines() if line.strip()]
    if any("@" not in line for line in lines):
        raise Invalid("each recipient must be an email address, one per line")
    return "\n".join(lines)


def webhook_url_check(url: str) -> None:
    # A receiver may know its caller only by a token in the URL (Google Chat's `?token=`):
    # a webhook's query is its own; its user and password are not.
    url_credentials_refused(
        url, what="a webhook URL", secret_goes="the signing secret", query=False
    )


@transaction.atomic
def channel_create(
    *, org: Organization, name: str, kind: str, url: str = "", secret: str = "", emails: str = ""
) -> NotificationChannel:
    if kind == ChannelKind.WEBHOOK:
        if not url or not secret:
            raise Invalid("a webhook channel needs a url and a signing secret")
        webhook_url_check(url)
        url_address_refused(org, url)
        return NotificationChannel.objects.create(
            org=org,
            name=name,
            kind=kind,
            url=url,
            secret_sealed=vault.seal_infrastructure(secret),
        )
    if kind == ChannelKind.EMAIL:
        recipients = _recipients(emails)
        if not recipients:
            raise Invalid("an email channel needs at least one recipient")
        return NotificationChannel.objects.create(org=org, name=name, kind=kind, emails=recipients)
    raise Invalid("kind must be webhook or email")


@transaction.atomic
def channel_update(
    *,
    channel: NotificationChannel,
    name: str,
    is_active: bool,
    url: str = "",
    emails: str = "",
    new_secret: str = "",
) -> NotificationChannel:
    """Change a channel; a blank `new_secret` keeps the sealed one."""
    channel = NotificationChannel.objects.select_for_update().get(pk=channel.pk)
    channel.name = name
    channel.is_active = is_active
    fields = ["name", "is_active"]
    if channel.kind == ChannelKind.WEBHOOK:
        if not url:
            raise Invalid("a webhook channel needs a url")
        webhook_url_check(url)
        if url != channel.url:
            url_address_refused(channel.org, url)
        channel.url = url
        fields.append("url")
        if new_secret:
            channel.secret_sealed = vault.seal_infrastructure(new_secret)
            fields.append("secret_sealed")
    else:
        channel.emails = _recipients(emails)
        if not channel.emails:
            raise Invalid("an email channel needs at least one recipient")
        fields.append("emails")
    channel.save(update_fields=fields)
    return channel
