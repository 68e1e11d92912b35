"""Turning tracing on from the standard OpenTelemetry variables: a TracerProvider with the
configured exporter (OTLP over http/protobuf, or the console), and the Django, psycopg and
httpx instrumentations feeding it. fluidbox keeps this provider to itself (see `tracing`)."""

import logging
import os
from collections.abc import Mapping
from urllib.parse import unquote_plus, urlsplit

from governance.observability import tracing

logger = logging.getLogger(__name__)


def exporter_configured(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the standard variables ask for spans to be exported somewhere."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters:
        return any(name.strip() not in ("", "none") for name in exporters.split(","))
    return bool(
        environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    )


def _class_only(span):
    """`span` with each exception event cut to its class, and an error status without its
    text. The Django, psycopg and httpx instrumentations record an exception's message and
    stack trace (and `Type: message` as the status): a database error quotes the row it
    refused, an unhandled one whatever the view was given. fluidbox's own spans record the
    class only (`tracing._span`); this holds every span to that."""
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.trace import Status

    exceptions = any(event.name == "exception" for event in span.events)
    if not exceptions and not span.status.description:
        return span
    events = [
        Event(
            "exception",
            {"exception.type": str(event.attributes.get("exception.type", ""))},
            event.timestamp,
        )
        if event.name == "exception"
        else event
        for event in span.events
    ]
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=span.attributes,
        events=events,
        links=span.links,
        kind=span.kind,
        status=Status(span.status.status_code),
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


def class_only_exporter(exporter):
    """`exporter`, sent every span as `_class_only` makes it."""
    from opentelemetry.sdk.trace.export import SpanExporter

    class ClassOnly(SpanExporter):
        def export(self, spans):
            return exporter.export([_class_only(span) for span in spans])

        def shutdown(self) -> None:
            exporter.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return exporter.force_flush(timeout_millis)

    return ClassOnly()


def _exporters(environ: Mapping[str, str]) -> list:
    from django.core.exceptions import ImproperlyConfigured

    names = [
        name.strip()
        for name in (environ.get("OTEL_TRACES_EXPORTER") or "otlp").lower().split(",")
        if name.strip() not in ("", "none")
    ]
    exporters = []
    for name in names:
        if name == "otlp":
            protocol = (
                environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf"
            )
            if protocol != "http/protobuf":
                raise ImproperlyConfigured(
                    f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: fluidbox exports OTLP over "
                    "http/protobuf (port 4318 on a collector)"
                )
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporters.append(OTLPSpanExporter())
        elif name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            exporters.append(ConsoleSpanExporter())
        else:
            raise ImproperlyConfigured(
                f"OTEL_TRACES_EXPORTER={name!r}: fluidbox supports otlp, console or none"
            )
    return exporters


def _strip_url_path(span, request) -> None:
    # A webhook's path is often its secret (Slack's /services/T…/B…/…): keep scheme and host.
    if span is None or not span.is_recording():
        return
    url = urlsplit(str(request.url))
    origin = f"{url.scheme}://{url.hostname}" + (f":{url.port}" if url.port else "") + "/"
    span.set_attribute("url.full", origin)
    span.set_attribute("http.url", origin)


# What the Django instrumentation copies from the request line into its server span: the
# path (a brokered call's tool name is a segment of it) and the query string, as the
# client wrote them.
_REQUEST_TARGET = ("http.target", "url.path", "url.query", "http.url", "url.full")


def _redact_request_target(span, request) -> None:
    """The server span's copy of the request line, masked as the ledger masks a caller's
    words: a secret an agent writes into a tool's name in the path, or into a query string,
    is no more exported here than in the `execute_tool` span."""
    if span is None or not span.is_recording():
        return
    from ledger.redaction import redact_text

    present = [key for key in _REQUEST_TARGET if key in (span.attributes or {})]
    if not present:
        return
    path = redact_text(request.path)
    query = redact_text(unquote_plus(request.META.get("QUERY_STRING", "")))
    target = f"{path}?{query}" if query else path
    # The scheme and host as the instrumentation read them (never `get_host`, which raises
    # on a Host header Django refuses, and the span would keep the raw request line).
    shown_url = span.attributes.get("http.url") or span.attributes.get("url.full") or ""
    full = urlsplit(str(shown_url))
    origin = f"{full.scheme}://{full.netloc.rpartition('@')[2]}" if full.netloc else ""
    shown = {
        "http.target": target,
        "url.path": path,
        "url.query": query,
        "http.url": origin + target,
        "url.full": origin + target,
    }
    span.set_attributes({key: shown[key] for key in present})


# The psycopg instrumentation's options, for the connections it wraps and for the cursors
# `traced_cursor_class` builds: no SQL comment appended, no parameter captured (they hold
# a call's arguments).
_PSYCOPG_OPTIONS = {"enable_commenter": False, "capture_parameters": False}
# Where `traced_cursor_class` keeps the classes it built for a psycopg connection (as the
# instrumentation itself marks the connections it has instrumented).
_TRACED_CURSORS = "_fluidbox_traced_cursor_classes"


def traces_cursor_class(factory: type, base: type) -> bool:
    """Whether `factory` is the psycopg instrumentation's traced subclass of `base` (what
    it puts on every connection it wraps while tracing is on)."""
    return (
        tracing.ENABLED
        and factory.__module__ == "opentelemetry.instrumentation.psycopg"
        and factory.__bases__ == (base,)
    )


def traced_cursor_class(base: type, connection) -> type:
    """`base` (a psycopg cursor class) traced by the official psycopg instrumentation, as
    the connection's own cursors are: the same span names and attributes (the connection's
    database, host, port and user), made by the same code. For the prebuilt statements,
    which run on a server-binding cursor instead of Django's client-side one.

    The instrumentation has no public call for a cursor class: this does what its own
    connection wrapper does on connect (`DatabaseApiIntegration.wrapped_connection`), with
    the names it uses there. tests/observability/test_traces.py fails if an upgrade moves
    them (the statements' spans would be missing)."""
    from opentelemetry.instrumentation import psycopg as psycopg_instrumentation

    built = getattr(connection, _TRACED_CURSORS, None)
    if built is None:
        built = {}
        setattr(connection, _TRACED_CURSORS, built)
    traced = built.get(base)
    if traced is None:
        instrumentor = psycopg_instrumentation.PsycopgInstrumentor
        integration = psycopg_instrumentation.DatabaseApiIntegration(
            psycopg_instrumentation.__name__,
            instrumentor._DATABASE_SYSTEM,
            connection_attributes=instrumentor._CONNECTION_ATTRIBUTES,
            version=psycopg_instrumentation.__version__,
            tracer_provider=tracing.provider(),
            connect_module=psycopg_instrumentation.psycopg,
            **_PSYCOPG_OPTIONS,
        )
        integration.get_connection_attributes(connection)
        traced = psycopg_instrumentation._new_cursor_factory(db_api=integration, base_factory=base)
        built[base] = traced
    return traced


def _sampler(environ: Mapping[str, str]):
    """The sampler OTEL_TRACES_SAMPLER names; without one, every call's spans. The SDK's
    own default (parentbased_always_on) obeys a remote parent's sampled flag, and the
    remote parent is the agent: its `traceparent` ending in `-00` would take its calls out
    of the operator's traces. An operator who wants the caller's decision followed says
    so (`parentbased_traceidratio`, `parentbased_always_on`)."""
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased

    if environ.get("OTEL_TRACES_SAMPLER", "").strip():
        return None  # the SDK reads the variable (and OTEL_TRACES_SAMPLER_ARG) itself
    return ParentBased(ALWAYS_ON, remote_parent_not_sampled=ALWAYS_ON)


def configure(environ: Mapping[str, str] = os.environ) -> bool:
    """Called once per process (GovernanceConfig.ready). True when tracing is on."""
    if tracing.ENABLED or not exporter_configured(environ):
        return tracing.ENABLED
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    named = environ.get("OTEL_SERVICE_NAME") or "service.name=" in environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    # Resource.create reads OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME; the sampler
    # comes from OTEL_TRACES_SAMPLER, the batching from OTEL_BSP_*, the exporter from
    # OTEL_EXPORTER_OTLP_*.
    resource = Resource.create({} if named else {"service.name": "fluidbox"})
    provider = TracerProvider(resource=resource, sampler=_sampler(environ))
    for exporter in _exporters(environ):
        provider.add_span_processor(BatchSpanProcessor(class_only_exporter(exporter)))
    DjangoInstrumentor().instrument(
        tracer_provider=provider,
        excluded_urls=environ.get("OTEL_PYTHON_DJANGO_EXCLUDED_URLS", "metrics"),
        request_hook=_redact_request_target,
    )
    PsycopgInstrumentor().instrument(tracer_provider=provider, **_PSYCOPG_OPTIONS)
    HTTPXClientInstrumentor().instrument(tracer_provider=provider, request_hook=_strip_url_path)
    tracing.activate(provider)
    logger.info("tracing on: spans are exported as the OTEL_* variables say")
    return True
