"""`GET /metrics`: every process's counters added up (prometheus_client's multiprocess
collector), plus the state read from the database at scrape time, behind a bearer token.

The token is `FLUIDBOX_METRICS_TOKEN`. Without one, `/metrics` is refused on the main
address, and served without a token only on the separate listener `FLUIDBOX_METRICS_BIND`
(gunicorn binds it too, see fluidbox/gunicorn_conf.py), which serves nothing else.
"""

import functools
import glob
import hmac
import ipaddress
import logging
import os
import socket
import struct
import time

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from governance.observability import metrics

logger = logging.getLogger(__name__)

VAULT_STATES = ("unsealed", "sealed", "machine-key")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _metrics_listener() -> tuple[str, int] | None:
    bind = settings.FLUIDBOX_METRICS_BIND
    if not bind:
        return None
    host, _, port = bind.rpartition(":")
    if not port.isdigit():
        return None  # not a TCP address gunicorn could bind: no listener is trusted
    return host.strip("[]"), int(port)


METRICS_LISTENER = _metrics_listener()
_ANY_ADDRESS = frozenset({"", "0.0.0.0", "::"})


@functools.cache
def _listener_addresses(host: str) -> frozenset[str]:
    """The local addresses a connection to the listener has: the host itself when it is an
    address, else what the name resolves to (gunicorn binds a name as IPv4)."""
    try:
        return frozenset({str(ipaddress.ip_address(host))})
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return frozenset()
    return frozenset(info[4][0] for info in infos)


def on_metrics_listener(request) -> bool:
    """Whether the request came in on the FLUIDBOX_METRICS_BIND listener, told by the local
    address of the connection's own socket (gunicorn puts it in the environ), never by
    anything the client sends: for a Unix socket gunicorn fills SERVER_NAME and SERVER_PORT
    from the Host header. Outside gunicorn there is no metrics listener."""
    if METRICS_LISTENER is None:
        return False
    sock = request.META.get("gunicorn.socket")
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return False
    try:
        local = sock.getsockname()
    except OSError:
        return False
    host, port = METRICS_LISTENER
    if local[1] != port:
        return False
    if host in _ANY_ADDRESS:
        return True
    address = ipaddress.ip_address(local[0].partition("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return str(address) in _listener_addresses(host)


class StateCollector:
    """Gauges and totals that live in the database, read when Prometheus scrapes."""

    def collect(self):
        from governance import vault
        from governance.models import Approval, ApprovalStatus
        from ledger.chain_checks import latest_ledger_check
        from ledger.models import AuditSink
        from ledger.streaming import sink_lags

        up = GaugeMetricFamily("fluidbox_database_up", "1 when /metrics could read the database")
        try:
            pending = Approval.objects.filter(status=ApprovalStatus.PENDING).count()
            state = vault.tier2_status()
            sinks = list(AuditSink.objects.select_related("org").order_by("org__slug", "name"))
            lags = sink_lags()
            check = latest_ledger_check()
        except DatabaseError:
            logger.exception("/metrics could not read the database")
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield GaugeMetricFamily(
            "fluidbox_approvals_pending", "Approvals waiting for a human", value=pending
        )
        vault_state = GaugeMetricFamily(
            "fluidbox_vault_state",
            "1 for the vault's current state: unsealed, sealed (brokered calls deny), "
            "machine-key (development fallback, no passphrase)",
            labels=["state"],
        )
        for name in VAULT_STATES:
            vault_state.add_metric([name], 1 if name == state else 0)
        yield vault_state
        yield GaugeMetricFamily(
            "fluidbox_ledger_check_problems",
            "Problems the latest check of the whole ledger found (altered, missing or "
            "orphaned events and leaves); 0 also before the first check",
            value=check.problem_count if check else 0,
        )
        yield GaugeMetricFamily(
            "fluidbox_ledger_check_timestamp_seconds",
            "When the latest check of the whole ledger finished (Unix time; 0: never)",
            value=check.finished_at.timestamp() if check else 0,
        )
        yield from _sink_families(sinks, lags)


def _sink_families(sinks, lags):
    labels = ["sink"]
    lag = GaugeMetricFamily(
        "fluidbox_audit_sink_lag_events",
        "Ledger events not yet acknowledged by the sink",
        labels=labels,
    )
    delivered = CounterMetricFamily(
        "fluidbox_audit_sink_events_delivered", "Events the sink acknowledged", labels=labels
    )
    dropped = CounterMetricFamily(
        "fluidbox_audit_sink_events_dropped",
        "Events skipped because the sink's backlog passed its bound",
        labels=labels,
    )
    failures = CounterMetricFamily(
        "fluidbox_audit_sink_delivery_failures",
        "Delivery attempts the sink refused or did not answer",
        labels=labels,
    )
    last = GaugeMetricFamily(
        "fluidbox_audit_sink_last_success_timestamp_seconds",
        "When the sink last acknowledged a batch (Unix time; 0: never)",
        labels=labels,
    )
    for sink in sinks:
        name = [sink.label]
        lag.add_metric(name, lags.get(sink.pk, 0))
        delivered.add_metric(name, sink.delivered_events)
        dropped.add_metric(name, sink.dropped_events)
        failures.add_metric(name, sink.failed_attempts)
        last.add_metric(name, sink.last_success_at.timestamp() if sink.last_success_at else 0)
    yield from (lag, delivered, dropped, failures, last)


class ProcessFilesCollector(MultiProcessCollector):
    """The library's collector, except that a file removed between the listing and the
    read does not fail the scrape. A web server forgets the files of dead processes when it
    starts (fluidbox/gunicorn_conf.py), and another server sharing the directory may be
    scraping at that moment; the vanished file's numbers are being forgotten anyway.

    The library tolerates that only for live gauges, so each file is read on its own and
    the samples are added up with the library's own accumulation. A file too short for its
    header is a process starting (created, not yet sized): it has no values to add yet."""

    def collect(self):
        combined = {}
        for path in glob.glob(os.path.join(self._path, "*.db")):
            try:
                of_one_file = self._read_metrics([path])
            except (FileNotFoundError, struct.error):
                continue
            for name, metric in of_one_file.items():
                if name in combined:
                    combined[name].samples.extend(metric.samples)
                else:
                    combined[name] = metric
        return self._accumulate_metrics(combined, accumulate=True)


def _authorized(request) -> bool:
    if on_metrics_listener(request):
        return True
    token = settings.FLUIDBOX_METRICS_TOKEN
    if not token:
        return False
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, presented = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        presented.strip().encode(), token.encode()
    )


def metrics_view(request):
    if not settings.FLUIDBOX_METRICS_ENABLED:
        return JsonResponse({"error": "not_found", "detail": "metrics are off"}, status=404)
    if request.method not in ("GET", "HEAD"):
        return JsonResponse({"error": "method_not_allowed", "detail": "GET /metrics"}, status=405)
    if not _authorized(request):
        detail = (
            "send Authorization: Bearer <FLUIDBOX_METRICS_TOKEN>"
            if settings.FLUIDBOX_METRICS_TOKEN
            else "set FLUIDBOX_METRICS_TOKEN, or scrape the FLUIDBOX_METRICS_BIND listener"
        )
        response = JsonResponse({"error": "unauthenticated", "detail": detail}, status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    registry = CollectorRegistry()
    ProcessFilesCollector(registry, path=settings.FLUIDBOX_METRICS_DIR)
    registry.register(StateCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


class RequestMetricsMiddleware:
    """Counts and times every request by its URL route; the metrics listener serves
    `/metrics` only."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path != "/metrics" and on_metrics_listener(request):
            return JsonResponse(
                {"error": "not_found", "detail": "this listener serves /metrics only"},
                status=404,
            )
        started = time.perf_counter()
        response = self.get_response(request)
        match = request.resolver_match
        route = match.route if match is not None else "unmatched"
        method = request.method if request.method in _METHODS else "other"
        metrics.http_request_recorded(
            method=method,
            route=route,
            status=response.status_code,
            seconds=time.perf_counter() - started,
        )
        return response
