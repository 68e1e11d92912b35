"""Configuring an organization's audit sinks (the admin calls these); `ledger.streaming`
delivers to them. A sink's token is sealed under the machine key at once."""

from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction

from governance import vault
from governance.errors import Invalid
from ledger.models import AuditSink, SinkKind


def sink_url_check(url: str) -> str:
    """The URL, if a sink may post to it: https (http only where allowed)."""
    parts = urlsplit(url)
    schemes = ("https", "http") if settings.FLUIDBOX_SINK_ALLOW_HTTP else ("https",)
    if parts.scheme in schemes and parts.hostname:
        return url
    raise Invalid("a sink needs an https:// URL (plain http only with FLUIDBOX_SINK_ALLOW_HTTP=1)")


@transaction.atomic
def sink_create(*, org, name: str, kind: str, url: str, token: str = "") -> AuditSink:
    if kind not in SinkKind.values:
        raise Invalid(f"kind must be one of {', '.join(SinkKind.values)}")
    if kind == SinkKind.SPLUNK_HEC and not token:
        raise Invalid("a Splunk HEC sink needs its HEC token")
    return AuditSink.objects.create(
        org=org,
        name=name,
        kind=kind,
        url=sink_url_check(url),
        token_sealed=vault.seal_infrastructure(token) if token else "",
    )


@transaction.atomic
def sink_update(
    *, sink: AuditSink, url: str, is_active: bool, max_backlog: int, new_token: str = ""
) -> AuditSink:
    """Change a sink; a blank `new_token` keeps the sealed one. A reactivated sink is due
    at once."""
    sink = AuditSink.objects.select_for_update().get(pk=sink.pk)
    sink.url = sink_url_check(url)
    sink.is_active = is_active
    sink.max_backlog = max_backlog
    sink.next_attempt_at = None
    fields = ["url", "is_active", "max_backlog", "next_attempt_at"]
    if new_token:
        sink.token_sealed = vault.seal_infrastructure(new_token)
        fields.append("token_sealed")
    sink.save(update_fields=fields)
    return sink
