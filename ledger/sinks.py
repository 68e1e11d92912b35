"""Configuring an organization's audit sinks (the admin calls these); `ledger.streaming`
delivers to them. A sink's token is sealed under the machine key at once, together with the
URL it was entered for: it is only ever sent there."""

import ipaddress
import re
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.db import transaction

from governance import vault
from governance.egress import url_address_refused, url_credentials_refused
from governance.errors import Invalid
from ledger.models import AuditSink, SinkKind
from ledger.redaction import register_secret

# What an HTTP header can carry as a credential: visible ASCII, no space or control.
_TOKEN = re.compile(r"[\x21-\x7e]+")
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")


def sink_url_check(url: str) -> str:
    """The URL, if a sink may post to it: https (http only where allowed), no credentials
    in it (they go in the token), a host httpx can reach by name or address, a real port."""
    if _CONTROL_OR_SPACE.search(url):
        raise Invalid("a sink URL cannot contain spaces or control characters")
    parts = urlsplit(url)
    schemes = ("https", "http") if settings.FLUIDBOX_SINK_ALLOW_HTTP else ("https",)
    if parts.scheme not in schemes or not parts.hostname:
        raise Invalid(
            "a sink needs an https:// URL (plain http only with FLUIDBOX_SINK_ALLOW_HTTP=1)"
        )
    url_credentials_refused(url, what="a sink URL", secret_goes="the token field")
    try:
        port = parts.port
        host = httpx.URL(url).raw_host.decode("ascii")
    except (ValueError, httpx.InvalidURL, UnicodeError):
        raise Invalid("the sink URL's host or port is not valid") from None
    if port is not None and not 1 <= port <= 65535:
        raise Invalid("the sink URL's port must be between 1 and 65535")
    if not _valid_host(host):
        raise Invalid("the sink URL's host is not a valid name or address")
    return url


def _valid_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        pass
    name = host.lower().removesuffix(".")
    return len(name) <= 253 and all(_LABEL.fullmatch(label) for label in name.split("."))


def sink_token_check(token: str) -> str:
    """The token, if it can go in an Authorization header as it is."""
    if token and not _TOKEN.fullmatch(token):
        raise Invalid(
            "a token is visible ASCII characters only: no spaces, line breaks, control or "
            "non-ASCII characters"
        )
    return token


def _token_sealed(url: str, token: str) -> str:
    # The URL the token was entered for is sealed with it (a URL has no line break, a token
    # neither), so no later change of the URL can send the token elsewhere.
    return vault.seal_infrastructure(f"{url}\n{token}") if token else ""


def sink_token(sink: AuditSink) -> str:
    """The token to send to the sink's URL ("" without one); Invalid if it was entered for
    another URL or cannot be sent."""
    if not sink.token_sealed:
        return ""
    plaintext = vault.unseal_infrastructure(sink.token_sealed)
    url, bound, token = plaintext.partition("\n")
    if not bound:
        token = plaintext  # sealed before tokens were bound to their URL
    register_secret(token)
    if bound and url != sink.url:
        raise Invalid("the token was entered for another URL: enter it again")
    return sink_token_check(token)


@transaction.atomic
def sink_create(
    *,
    org,
    name: str,
    kind: str,
    url: str,
    token: str = "",
    is_active: bool = True,
    max_backlog: int | None = None,
) -> AuditSink:
    if kind not in SinkKind.values:
        raise Invalid(f"kind must be one of {', '.join(SinkKind.values)}")
    if kind == SinkKind.SPLUNK_HEC and not token:
        raise Invalid("a Splunk HEC sink needs its HEC token")
    url = sink_url_check(url)
    url_address_refused(org, url)
    return AuditSink.objects.create(
        org=org,
        name=name,
        kind=kind,
        url=url,
        token_sealed=_token_sealed(url, sink_token_check(token)),
        is_active=is_active,
        # As entered in the form; the model's default (a million) otherwise.
        **({} if max_backlog is None else {"max_backlog": max_backlog}),
    )


@transaction.atomic
def sink_update(
    *, sink: AuditSink, url: str, is_active: bool, max_backlog: int, new_token: str = ""
) -> AuditSink:
    """Change a sink; a blank `new_token` keeps the sealed one, unless the URL changes: a
    token is only sent to the URL it was entered for, so a new URL needs it again. A
    reactivated sink is due at once."""
    sink = AuditSink.objects.select_for_update().get(pk=sink.pk)
    url = sink_url_check(url)
    sink_token_check(new_token)
    if url != sink.url and sink.token_sealed and not new_token:
        raise Invalid("changing a sink's URL needs its token again")
    if url != sink.url:
        url_address_refused(sink.org, url)
    sink.url = url
    sink.is_active = is_active
    sink.max_backlog = max_backlog
    sink.next_attempt_at = None
    fields = ["url", "is_active", "max_backlog", "next_attempt_at"]
    if new_token:
        sink.token_sealed = _token_sealed(url, new_token)
        fields.append("token_sealed")
    sink.save(update_fields=fields)
    return sink
