"""HTTP receivers a test starts on 127.0.0.1: an OTLP/HTTP trace collector (decoding with
opentelemetry-proto) and an audit sink that can refuse, go away and come back."""

import errno
import gzip
import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.servers import free_port
from tests.support.waiting import wait_until


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Receiver:
    """One HTTP server on a fixed port, in a thread; `stop()` closes the port, `start()`
    opens it again (a client sees connection refused in between)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = free_port()
        self.lock = threading.Lock()
        self._server: _Server | None = None
        self._holder: socket.socket | None = None

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> tuple[int, bytes]:
        raise NotImplementedError

    def start(self) -> "Receiver":
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                status, answer = receiver.handle(self, body)
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        def bound() -> bool:
            try:
                self._server = _Server((self.host, self.port), Handler)
            except OSError as error:
                if error.errno != errno.EADDRINUSE:
                    raise
                return False
            return True

        holder, self._holder = self._holder, None
        if holder is not None:
            holder.close()
        wait_until(bound, f"port {self.port} free to listen on again")
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
            # The port stays bound, not listening, until `start()`: a client is refused as by
            # a closed port, and no outgoing connection takes it as its own end meanwhile (the
            # port lies in the kernel's ephemeral range; a CI run found it taken on restart).
            holder = socket.socket()
            holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                holder.bind((self.host, self.port))
            except OSError:
                holder.close()  # `start()` then waits for the port to be free
            else:
                self._holder = holder

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _value(any_value) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in any_value.array_value.values]
    if kind == "kvlist_value":
        return {item.key: _value(item.value) for item in any_value.kvlist_value.values}
    return getattr(any_value, kind) if kind else None


@dataclass
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    start: int
    attributes: dict[str, Any]
    status_code: int
    events: list = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)


class OtlpReceiver(Receiver):
    """`POST /v1/traces` in OTLP/HTTP protobuf; keeps every span, and every raw body (to
    search for what must never be exported)."""

    def __init__(self, *, decode: bool = True) -> None:
        super().__init__()
        self.decode = decode
        self.spans: list[Span] = []
        self.bodies: list[bytes] = []
        self.requests = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def handle(self, handler, body):
        if handler.path != "/v1/traces":
            return 404, b""
        with self.lock:
            self.requests += 1
            self.bodies.append(body)
        if self.decode:  # a bench leaves it to the end (span_count)
            spans = _decoded_spans(body)
            with self.lock:
                self.spans.extend(spans)
        return 200, ExportTraceServiceResponse().SerializeToString()

    def snapshot(self) -> list[Span]:
        with self.lock:
            return list(self.spans)

    def span_count(self) -> int:
        """Spans in every body received, decoded now if they were not as they came."""
        with self.lock:
            bodies = list(self.bodies)
        return sum(len(_decoded_spans(body)) for body in bodies)


def _decoded_spans(body: bytes) -> list[Span]:
    request = ExportTraceServiceRequest.FromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    Span(
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        kind=span.kind,
                        start=span.start_time_unix_nano,
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        status_code=span.status.code,
                        events=[
                            (e.name, {a.key: _value(a.value) for a in e.attributes})
                            for e in span.events
                        ],
                        resource=resource,
                    )
                )
    return spans


class SinkReceiver(Receiver):
    """An audit sink: logs every request it accepted (headers, JSON lines) and refuses the
    first `refuse_first` requests with 503."""

    def __init__(
        self,
        *,
        refuse_first: int = 0,
        expect_authorization: str | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        super().__init__(host)
        self.refuse_first = refuse_first
        self.expect_authorization = expect_authorization
        self.attempts = 0
        self.accepted: list[dict] = []  # every line of every accepted request, in order
        self.headers: list[dict] = []

    def handle(self, handler, body):
        with self.lock:
            self.attempts += 1
            if self.attempts <= self.refuse_first:
                return 503, b'{"error": "not yet"}'
            if (
                self.expect_authorization is not None
                and handler.headers.get("Authorization") != self.expect_authorization
            ):
                return 401, b'{"error": "who are you"}'
            self.headers.append(dict(handler.headers))
            for line in body.decode("utf-8").splitlines():
                if line.strip():
                    self.accepted.append(json.loads(line))
        return 200, b'{"text": "Success", "code": 0}'

    def lines(self) -> list[dict]:
        with self.lock:
            return list(self.accepted)


def port_is_closed(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0
