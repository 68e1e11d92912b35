"""OpenTelemetry spans for the gate and the broker (`tracing_setup` turns them on when the
standard OTEL_* variables configure an exporter; until then every call here is a no-op).

One span per gate call, named and attributed as the GenAI `execute_tool` span
(`gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`), with a child span per
gate stage that ran and the outcome as `fluidbox.*` attributes; a brokered call's upstream
request is a CLIENT span in the MCP conventions (`tools/call <tool>`), and its W3C trace
context travels to the server in `params._meta`. An incoming `traceparent` continues: the
HTTP header through the Django instrumentation, an MCP request's `_meta` through
`continue_trace_from_meta`.

Arguments, results, reasons (a schema error quotes the argument) and secrets are never
attributes. fluidbox keeps its own TracerProvider rather than the global one: the MCP SDK
makes its own client spans through the global provider, and would otherwise put a second
client span (and its own `traceparent`) between ours and the server.
"""

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ledger.redaction import redact_text

ENABLED = False
_provider = None
_tracer: trace.Tracer = trace.NoOpTracer()
# The execute_tool span of the call being handled: the broker opens it, the gate joins it.
_tool_span: ContextVar["ToolCallSpan | None"] = ContextVar("fluidbox_tool_span", default=None)


def activate(provider) -> None:
    """Spans from now on go to `provider` (`tracing_setup.configure` built it)."""
    global ENABLED, _provider, _tracer
    _provider = provider
    _tracer = provider.get_tracer("fluidbox")
    ENABLED = True


def provider():
    """The TracerProvider spans go to (None while tracing is off)."""
    return _provider


def flush(timeout_millis: int = 5000) -> None:
    if _provider is not None:
        _provider.force_flush(timeout_millis)


# --- what fluidbox code calls -------------------------------------------------------------


@contextmanager
def _span(name: str, *, kind: SpanKind = SpanKind.INTERNAL, attributes: dict | None = None):
    """A span that, on an exception, records its class only: an exception's message can
    quote an argument or what an upstream server sent back (a credential, even)."""
    with _tracer.start_as_current_span(
        name,
        kind=kind,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except BaseException as error:
            span.set_attribute("error.type", type(error).__qualname__)
            span.set_status(Status(StatusCode.ERROR))
            raise


class _Off:
    """Every handle when tracing is off: nothing recorded, nothing allocated."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def decided(self, decision) -> None:
        pass

    def answered(self, **outcome) -> None:
        pass

    def brokered(self, status: str) -> None:
        pass

    def result(self, *, is_error: bool) -> None:
        pass

    def failed(self, error_type: str) -> None:
        pass

    @property
    def meta(self) -> dict:
        return {}


OFF = _Off()


class ToolCallSpan:
    """The GenAI `execute_tool` span of one gate call."""

    def __init__(self, span, tool_call_id: str) -> None:
        self.span = span
        self.tool_call_id = tool_call_id

    def answered(
        self,
        *,
        decision: str,
        source: str | None,
        rule: dict | None,
        policy_version: int | None,
        replayed: bool = False,
        fail_closed: str | None = None,
    ) -> None:
        attributes: dict[str, Any] = {"fluidbox.decision": decision, "fluidbox.replayed": replayed}
        if source:
            attributes["fluidbox.source"] = source
        if rule is not None and rule.get("index") is not None:
            attributes["fluidbox.rule"] = int(rule["index"])
        if policy_version is not None:
            attributes["fluidbox.policy_version"] = int(policy_version)
        if fail_closed:
            attributes["fluidbox.fail_closed"] = fail_closed
        self.span.set_attributes(attributes)

    def brokered(self, status: str) -> None:
        """The broker's outcome (succeeded, tool_error, failed, refused) after the gate's."""
        self.span.set_attribute("fluidbox.broker.status", status)


@contextmanager
def tool_call_span(
    *, run, tool: str, tool_call_id: str, session_id: str, brokered: bool = False
) -> Iterator[ToolCallSpan | _Off]:
    """The gate call's span; re-entered (not nested) when the broker already opened it."""
    if not ENABLED:
        yield OFF
        return
    active = _tool_span.get()
    if active is not None and active.tool_call_id == tool_call_id:
        yield active
        return
    # The caller's words, as the ledger records them: a secret a client wrote into an id
    # or a tool's name is masked in the span too (a tracing backend is read by more people).
    shown_tool = redact_text(tool)
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": shown_tool,
        "gen_ai.tool.call.id": redact_text(tool_call_id),
        "gen_ai.tool.type": "extension" if brokered else "function",
        "gen_ai.agent.name": run.agent,
        "gen_ai.conversation.id": redact_text(session_id),
        "fluidbox.run.id": str(run.pk),
    }
    with _span(f"execute_tool {shown_tool}", attributes=attributes) as span:
        handle = ToolCallSpan(span, tool_call_id)
        token = _tool_span.set(handle)
        try:
            yield handle
        finally:
            _tool_span.reset(token)


def current_tool_span() -> "ToolCallSpan | _Off":
    """The execute_tool span of the call being handled (OFF when there is none)."""
    return _tool_span.get() or OFF


class _StageSpan:
    """What `_span` does, without its three nested generator context managers: a decision
    opens five or six of these, and each layer cost more CPU than the span itself."""

    __slots__ = ("name", "span", "_token")

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self):
        self.span = _tracer.start_span(
            f"gate.{self.name}",
            attributes={"fluidbox.stage": self.name},
            record_exception=False,
            set_status_on_exception=False,
        )
        self._token = otel_context.attach(trace.set_span_in_context(self.span))
        return self

    def __exit__(self, exc_type, exc, traceback) -> bool:
        try:
            if exc_type is not None:  # as `_span`: the class only, never the message
                self.span.set_attribute("error.type", exc_type.__qualname__)
                self.span.set_status(Status(StatusCode.ERROR))
        finally:
            otel_context.detach(self._token)
            self.span.end()
        return False

    def decided(self, decision) -> None:
        if decision is None:
            self.span.set_attribute("fluidbox.stage.outcome", "continue")
            return
        attributes = {"fluidbox.stage.outcome": str(decision.outcome)}
        if decision.source:
            attributes["fluidbox.source"] = str(decision.source)
        self.span.set_attributes(attributes)


def gate_stage(stage) -> "_StageSpan | _Off":
    """A child span for one stage of `governance.gate.pipeline.STAGES`."""
    if not ENABLED:
        return OFF
    return _StageSpan(stage.__name__.removeprefix("check_"))


class McpClientSpan:
    """A CLIENT span per the MCP conventions around one request to an upstream server."""

    def __init__(self, span) -> None:
        self.span = span
        self._meta: dict[str, str] = {}
        propagate.inject(self._meta)

    @property
    def meta(self) -> dict:
        """`params._meta` for the request: this span's W3C trace context."""
        return dict(self._meta)

    def result(self, *, is_error: bool) -> None:
        if is_error:
            self.failed("tool_error")

    def failed(self, error_type: str) -> None:
        self.span.set_attribute("error.type", error_type)
        self.span.set_status(Status(StatusCode.ERROR))


@contextmanager
def mcp_client_span(*, method: str, tool: str, transport: str, url: str | None):
    if not ENABLED:
        yield OFF
        return
    attributes: dict[str, Any] = {"mcp.method.name": method, "gen_ai.tool.name": tool}
    if method == "tools/call":
        attributes["gen_ai.operation.name"] = "execute_tool"
    if transport == "stdio":
        attributes["network.transport"] = "pipe"
    else:
        attributes["network.transport"] = "tcp"
        attributes["network.protocol.name"] = "http"
        parts = urlsplit(url or "")
        if parts.hostname:
            attributes["server.address"] = parts.hostname
            attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    with _span(f"{method} {tool}", kind=SpanKind.CLIENT, attributes=attributes) as span:
        yield McpClientSpan(span)


def ledger_ids() -> dict[str, str]:
    """The current trace and span ids for a ledger event, or nothing when not tracing."""
    if not ENABLED:
        return {}
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {
        "trace_id": trace.format_trace_id(context.trace_id),
        "span_id": trace.format_span_id(context.span_id),
    }


@contextmanager
def continue_trace_from_meta(meta: Mapping[str, Any] | None) -> Iterator[None]:
    """Run the block as part of the trace whose W3C context an MCP request carried in
    `params._meta` (`traceparent`, `tracestate`). For the MCP endpoint: wrap the handling
    of one request in it and the gate's spans become children of the agent's span. A
    missing or malformed `traceparent` leaves the current context as it is."""
    if not ENABLED or not isinstance(meta, Mapping):
        yield
        return
    carrier = {key: value for key, value in meta.items() if isinstance(value, str)}
    try:
        extracted = propagate.extract(carrier)
    except (ValueError, TypeError):
        yield
        return
    if not trace.get_current_span(extracted).get_span_context().is_valid:
        yield
        return
    token = otel_context.attach(extracted)
    try:
        yield
    finally:
        otel_context.detach(token)
