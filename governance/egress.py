"""Where the control plane may connect: a connection URL must not reach internal addresses.

The broker and the photographer send requests from inside the deployment, so a member's
connection URL pointed at `http://127.0.0.1:5432`, `http://169.254.169.254/` or a
hostname resolving there would make fluidbox a proxy into its own network (SSRF). Every
address is checked *after* DNS resolution, on every request (redirects included), and the
request is sent to the address that was checked (the hostname is resolved once and the
connection pinned to it), so a name that answers differently the second time (DNS
rebinding) cannot slip through.

Loopback, private, shared (CGNAT), link-local (cloud metadata lives there:
169.254.169.254, fd00:ec2::254), multicast, unspecified, reserved and every other not
globally routable address is refused, also when it hides inside an IPv6 form
(`::ffff:127.0.0.1`, 6to4, Teredo, NAT64). An allow-list admits hosts anyway: the
deployment's `FLUIDBOX_CONNECTION_ALLOWED_HOSTS` and each organization's own list
(edited by its admins). An entry is a hostname, an IP address or a CIDR network, with an
optional `:port` (`tracker.internal`, `10.0.0.7:8080`, `[fd00::1]:443`, `10.1.0.0/16`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

import anyio
import httpx
import httpx2

from governance.numerals import numeral

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_DEFAULT_PORTS = {"http": 80, "https": 443}

# The most of one response body the control plane reads from a server an organization
# chose (a stdio server's line has the same bound): past it the body is cut off, never
# buffered whole, so a server answering with gigabytes cannot exhaust a web process.
MAX_RESPONSE_BYTES = 16 * 1024 * 1024


# Query parameters that carry a credential though no secret word names them: an Azure SAS's
# `sig`, an Azure Functions `code`, a Google API `key`.
_URL_CREDENTIAL_PARAMETERS = frozenset({"sig", "code", "key"})


def url_credentials_refused(url: str, *, what: str, secret_goes: str, query: bool = True) -> None:
    """Invalid when `url` carries a user or password, or a credential in its query. A URL
    is shown to the organization's staff on every page that names its connection, channel
    or sink; the secret belongs in the field that is sealed and never shown
    (`secret_goes`)."""
    from governance.errors import Invalid
    from ledger.redaction import SECRET_KEY_PATTERN

    parts = urlsplit(url)
    if "@" in parts.netloc:
        raise Invalid(f"{what} cannot carry a user or password: put the secret in {secret_goes}")
    # `?token=`, `?api_key=`, Splunk's query-string authentication: shown with the URL too.
    for name, _value in parse_qsl(parts.query if query else "", keep_blank_values=True):
        if SECRET_KEY_PATTERN.search(name) or name.lower() in _URL_CREDENTIAL_PARAMETERS:
            raise Invalid(
                f"{what} cannot carry a credential in its query string ({name[:40]!r}): "
                f"put the secret in {secret_goes}"
            )


def url_address_refused(org, url: str) -> None:
    """Invalid (`address_refused`) when `url`'s host is, or resolves to, an address the
    organization may not reach: checked when a connection, webhook or sink is saved, so an
    admin learns it there, and again on every request (DNS may answer otherwise later)."""
    from governance.errors import Invalid

    try:
        rules_for_org(org).check_url(url)
    except EgressRefused as refused:
        raise Invalid(str(refused), code="address_refused") from None


class EgressRefused(Exception):
    """A connection URL or an address it resolves to is not one fluidbox may connect to."""


class AllowListError(ValueError):
    """An allow-list entry that is not a hostname, address or network (with optional port)."""


@dataclass(frozen=True)
class _Entry:
    host: str | None = None  # a lowercase hostname
    network: IpNetwork | None = None
    port: int | None = None

    def admits_name(self, host: str, port: int) -> bool:
        return self.host is not None and self.host == host and self.port in (None, port)

    def admits_address(self, address: IpAddress, port: int) -> bool:
        return (
            self.network is not None
            and address.version == self.network.version
            and address in self.network
            and self.port in (None, port)
        )


def _port(text: str, entry: str) -> int:
    port = numeral(text, 5)
    if port is None or not 0 < port < 65536:
        raise AllowListError(f"{entry!r}: the port must be a number from 1 to 65535")
    return port


def parse_entry(entry: str) -> _Entry:
    text = entry.strip()
    if not text:
        raise AllowListError("an empty entry")
    port = None
    if text.startswith("["):  # [v6] or [v6]:port
        inside, _, rest = text[1:].partition("]")
        if rest:
            if not rest.startswith(":"):
                raise AllowListError(f"{entry!r}: expected [address]:port")
            port = _port(rest[1:], entry)
        text = inside
    elif text.count(":") == 1:  # host:port or v4:port (a bare v6 address has several colons)
        text, _, port_text = text.partition(":")
        port = _port(port_text, entry)
    try:
        return _Entry(network=ipaddress.ip_network(text, strict=False), port=port)
    except ValueError:
        pass
    host = text.lower().rstrip(".")
    labels = host.split(".")
    if not host or len(host) > 253 or not all(_is_label(label) for label in labels):
        raise AllowListError(f"{entry!r} is not a hostname, an IP address or a network")
    return _Entry(host=host, port=port)


def _is_label(label: str) -> bool:
    return 0 < len(label) <= 63 and all(c.isalnum() or c in "-_" for c in label)


def parse_allow_list(entries: Iterable[str]) -> tuple[_Entry, ...]:
    return tuple(parse_entry(entry) for entry in entries if entry.strip())


def allow_list_lines(text: str) -> list[str]:
    """An allow-list as an admin types it: one entry per line or comma-separated."""
    return [part.strip() for line in text.splitlines() for part in line.split(",") if part.strip()]


def forbidden_because(address: IpAddress) -> str | None:
    """Why fluidbox must not connect to `address`, or None for a public address."""
    if isinstance(address, ipaddress.IPv6Address):
        for embedded in (address.ipv4_mapped, address.sixtofour):
            if embedded is not None:
                return forbidden_because(embedded)
        if address.teredo is not None:
            return forbidden_because(address.teredo[1])
        if address in _NAT64:
            return forbidden_because(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (cloud metadata services live there)"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private address"
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:
        # fec0::/10: deprecated, yet still a site's own; Python counts it as global.
        return "a site-local address"
    if address.is_reserved or not address.is_global:
        return "not a globally routable address"
    return None


@dataclass(frozen=True)
class EgressRules:
    """What one organization's connections may reach: public addresses plus its allow-list."""

    allowed: tuple[_Entry, ...] = ()

    def check_address(self, host: str, address: IpAddress, port: int) -> None:
        if any(entry.admits_address(address, port) for entry in self.allowed):
            return
        problem = forbidden_because(address)
        if problem is not None:
            shown = host if host == str(address) else f"{host} ({address})"
            raise EgressRefused(
                f"{shown} is {problem}; connections may not reach it unless an admin adds it "
                "to the organization's allowed hosts"
            )

    def names_allowed(self, host: str, port: int) -> bool:
        return any(entry.admits_name(host, port) for entry in self.allowed)

    def checked(self, host: str, port: int, infos: list) -> str:
        """The first resolved address, after every one of them passed the check."""
        addresses = [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos]
        if not addresses:
            raise EgressRefused(f"{host} does not resolve to any address")
        if not self.names_allowed(host, port):
            for address in addresses:
                self.check_address(host, address, port)
        return str(addresses[0])

    def check_url(self, url: str) -> None:
        """Refuse a connection URL whose host is (or resolves to) a forbidden address. A
        name that does not resolve yet is let through: every request is checked again."""
        scheme, host, port = _target(url)
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError):
            return
        self.checked(host, port, infos)


def _target(url: str) -> tuple[str, str, int]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise EgressRefused(f"the URL is not valid: {error}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise EgressRefused("a connection URL must be http:// or https://")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise EgressRefused("the URL has no host")
    return scheme, host, port or _DEFAULT_PORTS[scheme]


def _literal_infos(host: str, port: int) -> list:
    """An address written in the URL (`127.0.0.1`, `::ffff:7f00:1`) read as the resolver
    would, without asking it: `AI_NUMERICHOST` never looks a name up, so this cannot block
    the event loop, and it saves the hop to a resolver thread and back on every request (a
    brokered call's upstream exchange sends one or two). Empty for a name, which is resolved
    as before; the addresses go through the same check either way."""
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except (socket.gaierror, UnicodeError, ValueError):
        return []


class ResponseTooLarge(httpx2.StreamError):
    """A response body ran past `MAX_RESPONSE_BYTES`; the rest was not read."""


def _too_large() -> str:
    return f"the server's response ran past {MAX_RESPONSE_BYTES} bytes; the rest was not read"


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, stream: httpx2.AsyncByteStream) -> None:
        self._stream = stream

    async def __aiter__(self):
        read = 0
        async for chunk in self._stream:
            read += len(chunk)
            if read > MAX_RESPONSE_BYTES:
                raise ResponseTooLarge(_too_large())
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class _CappedSyncStream(httpx.SyncByteStream):
    def __init__(self, stream: httpx.SyncByteStream, request: httpx.Request) -> None:
        self._stream = stream
        self._request = request

    def __iter__(self):
        read = 0
        for chunk in self._stream:
            read += len(chunk)
            if read > MAX_RESPONSE_BYTES:
                raise httpx.ReadError(_too_large(), request=self._request)
            yield chunk

    def close(self) -> None:
        self._stream.close()


def _pin(request, rules: EgressRules, infos, scheme: str, host: str, port: int) -> None:
    """Point `request` at the checked address; the Host header and the TLS server name
    stay the hostname, so virtual hosting and certificate checks work as before."""
    address = rules.checked(host, port, infos)
    request.url = request.url.copy_with(host=address)
    if scheme == "https":
        request.extensions = {**request.extensions, "sni_hostname": host}


class GuardedTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport (the MCP client's) that resolves each request's host once,
    checks every address, and sends the request to the checked address.

    One client talks to one endpoint here, so pooling connections by address cannot mix
    two hostnames' TLS sessions.
    """

    def __init__(self, rules: EgressRules, *, verify: ssl.SSLContext | bool = True) -> None:
        self._rules = rules
        # A client given a transport ignores HTTP(S)_PROXY from the environment: a proxy
        # would resolve and connect on our behalf to an address we never checked.
        self._inner = httpx2.AsyncHTTPTransport(verify=verify)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        scheme, host, port = _target(str(request.url))
        try:
            infos = _literal_infos(host, port) or await anyio.getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except (socket.gaierror, UnicodeError) as error:
            message = f"{host} does not resolve: {error}"
            raise httpx2.ConnectError(message, request=request) from None
        _pin(request, self._rules, infos, scheme, host, port)
        response = await self._inner.handle_async_request(request)
        response.stream = _CappedStream(response.stream)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class GuardedSyncTransport(httpx.BaseTransport):
    """The same guard for httpx's synchronous client: approval webhooks and audit sinks,
    whose URLs an organization's admin sets, are held to the organization's egress rules
    like its connections."""

    def __init__(self, rules: EgressRules, deadline: _Deadline | None = None) -> None:
        self._rules = rules
        self._deadline = deadline
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        scheme, host, port = _target(str(request.url))
        try:
            infos = _literal_infos(host, port) or _resolved(host, port, self._deadline)
        except (socket.gaierror, UnicodeError) as error:
            raise httpx.ConnectError(f"{host} does not resolve: {error}", request=request) from None
        except TimeoutError:
            raise httpx.ConnectTimeout(f"{host} did not resolve in time", request=request) from None
        _pin(request, self._rules, infos, scheme, host, port)
        response = self._inner.handle_request(request)
        response.stream = _CappedSyncStream(response.stream, request)
        return response

    def close(self) -> None:
        self._inner.close()


def _resolved(host: str, port: int, deadline: _Deadline | None) -> list:
    """getaddrinfo, within what is left of `deadline`: a resolver that never answers would
    otherwise hold the caller as long as the C library's own retries last (no socket of
    ours to shut). Past it, TimeoutError; the lookup's thread ends when the resolver does."""
    if deadline is None:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    outcome: dict = {}

    def resolve() -> None:
        try:
            outcome["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as error:
            outcome["error"] = error

    lookup = threading.Thread(target=resolve, name=f"resolve {host}", daemon=True)
    lookup.start()
    lookup.join(deadline.remaining())
    if lookup.is_alive():
        raise TimeoutError(host)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["infos"]


class _Deadline:
    """Ends an exchange that runs past `seconds` in all. httpx's timeout bounds each read,
    so a server answering a byte at a time, each inside it, would hold the caller for
    hours: the streamer that delivers every organization's audit sinks, or the worker that
    sends every organization's webhooks. At the deadline the connection's socket is shut
    down, and the read waiting on it fails at once."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._ends = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self._ends - time.monotonic())

    def trace(self, event: str, info: dict) -> None:
        """httpcore's `trace` extension: told of each connection it opens."""
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def guarded_post(org, url: str, *, timeout: float, **kwargs) -> httpx.Response:
    """POST from the control plane to a URL an organization chose (redirects not followed).
    `timeout` bounds the whole exchange, not only each read (see `_Deadline`): past it,
    httpx.ReadTimeout."""
    with (
        _Deadline(timeout) as deadline,
        httpx.Client(transport=GuardedSyncTransport(rules_for_org(org), deadline)) as client,
    ):
        try:
            return client.post(url, timeout=timeout, extensions={"trace": deadline.trace}, **kwargs)
        except httpx.TransportError:
            if deadline.expired:
                raise httpx.ReadTimeout(f"no complete answer within {timeout:g} s") from None
            raise


def deployment_allow_list() -> tuple[_Entry, ...]:
    from django.conf import settings

    return parse_allow_list(settings.FLUIDBOX_CONNECTION_ALLOWED_HOSTS)


def rules_for_org(org) -> EgressRules:
    """The deployment's allow-list and the organization's own."""
    own = parse_allow_list(allow_list_lines(org.connection_allowed_hosts or ""))
    return EgressRules(allowed=deployment_allow_list() + own)
