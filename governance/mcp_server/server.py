"""The MCP server behind `POST /v1/mcp`: the official SDK's low-level `Server`, stateless.

Stateless streamable HTTP (`stateless=True`): every POST carries everything it needs (the
run comes from its bearer token), so any web process can answer any request and none keeps
a session another would miss. The SDK serves both protocol eras on it: the initialize
handshake (2025 versions, without `Mcp-Session-Id`) and the 2026-07-28 single-exchange
requests. Responses may stream (SSE) so a waiting call can send progress notifications.

Handlers run on the process's MCP event loop (see `bridge.py`); every database touch runs in
a worker thread and closes its connection afterwards, as a Django request would.
"""

import asyncio
import contextvars
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import mcp_types as types
from django.conf import settings
from django.db import close_old_connections
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from governance.binding_state import BindingNow
from governance.mcp_server.calls import (
    McpAnswer,
    approval_wait_bound,
    awaiting_text,
    client_call_id,
    mcp_tool_call,
)
from governance.mcp_server.catalog import NamedTool, run_mcp_catalog
from governance.mcp_server.db_threads import DatabaseThreads, pooled
from governance.mcp_server.eras import carried_result, listable
from governance.models import FrozenTool, Run
from governance.observability import tracing
from governance.schemas import MAX_ARGUMENT_BYTES, json_scalars

# What the view hands the SDK's app with the request: the run its token check read (with its
# budget and frozen policy version), the run's tools by MCP name (`catalog.named_tools`) and
# whether the client asked for progress (`progress_requested`).
RUN_ENVIRON_KEY = "fluidbox.mcp_run"
TOOLS_ENVIRON_KEY = "fluidbox.mcp_tools"
PROGRESS_ENVIRON_KEY = "fluidbox.mcp_progress"
# A `tools/call`'s tool as the token check read it with the run (`PrefetchedTool`).
PREFETCHED_ENVIRON_KEY = "fluidbox.mcp_prefetched_tool"
POSTED_ENVIRON_KEY = "fluidbox.mcp_posted_message"
# A request body larger than this is refused before it is parsed (arguments ≤ 256 KiB).
MAX_BODY_BYTES = 2 * MAX_ARGUMENT_BYTES
# The pools' threads share one name: a test waits for every one of them to let go of the
# database.
_THREAD_NAME = "fluidbox-mcp-db"


class _Limiters:
    """Quick database work (the token check, listing), a call's first attempt (the gate and
    the upstream's answer, which an upstream may make slow) and approval waits draw threads
    from separate pools: calls waiting for a human never starve the ones that are not, and
    one organization's slow upstream never starves every run's token checks and listings.
    Quick work and calls run on threads that keep their database connection between jobs
    (`db_threads.py`); a wait's thread holds none while it waits."""

    quick: DatabaseThreads | None = None
    calls: DatabaseThreads | None = None
    waits: anyio.CapacityLimiter | None = None
    _lock = threading.Lock()

    @classmethod
    def get(cls) -> tuple[DatabaseThreads, anyio.CapacityLimiter]:
        with cls._lock:
            if cls.waits is None:  # created on the loop that uses it
                cls.waits = anyio.CapacityLimiter(settings.FLUIDBOX_MCP_MAX_WAITING)
        return cls.quick_threads(), cls.waits

    @classmethod
    def quick_threads(cls) -> DatabaseThreads:
        return cls._threads("quick", settings.FLUIDBOX_MCP_QUICK_THREADS)

    @classmethod
    def call_threads(cls) -> DatabaseThreads:
        return cls._threads("calls", settings.FLUIDBOX_MCP_CALL_THREADS)

    @classmethod
    def _threads(cls, pool: str, size: int) -> DatabaseThreads:
        with cls._lock:
            if getattr(cls, pool) is None:
                setattr(cls, pool, DatabaseThreads(size, _THREAD_NAME))
            return getattr(cls, pool)


def in_database_thread(job: Callable[[], Any]) -> Any:
    """Run `job` on one of the endpoint's quick database threads and wait for it (from a
    request thread: the view's token check). With psycopg's pool the request thread's own
    connection comes from the pool and starts no backend, so the job runs right here: the
    hop to another thread and back would be all it cost."""
    if pooled():
        return job()
    return _Limiters.quick_threads().submit(job).result()


@dataclass(frozen=True)
class PrefetchedTool:
    """The frozen tool a `tools/call` names, with its binding as it is now, read by the
    request's token check in the same statement as the run (one round trip fewer than the
    broker reading it itself). Handed to the broker for the first attempt only."""

    mcp_name: str
    frozen: FrozenTool | None
    binding: BindingNow | None


@dataclass(frozen=True)
class PostedRefusal:
    """A JSON-RPC error the view answers for a body the SDK would misread."""

    code: int
    message: str
    request_id: str | int | None


@dataclass(frozen=True)
class PostedMessage:
    """What the endpoint needs to know of a POST's JSON-RPC body before the SDK reads it,
    from one parse: the tool a `tools/call` names (None otherwise), and whether the request
    carries a progress token (`params._meta`) — only such a request can be sent
    notifications while it runs, so only its answer needs an event stream. In doubt (a
    batch, a body that is not JSON): no tool, and a stream."""

    called_tool: str | None
    progress_requested: bool
    refusal: PostedRefusal | None = None


# A lone surrogate can only arrive escaped (`\ud800`): as UTF-8 bytes the body is not text.
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _is_request_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _holds_lone_surrogate(value: Any) -> bool:
    # json.loads joins an escaped pair into one character, so any surrogate left is alone.
    return any(isinstance(item, str) and _SURROGATE.search(item) for item in json_scalars(value))


def _refusal(message: dict, body: bytes) -> PostedRefusal | None:
    """The SDK reads a request whose `id` is an object, a list, a boolean or null as a
    notification and answers 202 with nothing; and refuses a lone surrogate with a parse
    error about hex escapes. Both are told plainly instead."""
    if "id" in message and not _is_request_id(message["id"]):
        return PostedRefusal(
            -32600, "Invalid Request: a request's id must be a string or a number", None
        )
    if _ESCAPED_SURROGATE.search(body) and _holds_lone_surrogate(message):
        request_id = message.get("id") if _is_request_id(message.get("id")) else None
        return PostedRefusal(
            -32700,
            "Parse error: the body holds a lone surrogate (an escaped \\ud800-\\udfff "
            "without its pair), which is not text",
            request_id,
        )
    return None


def posted_message(request) -> PostedMessage:
    """`PostedMessage` of a Django request's body, parsed once per request."""
    known = request.META.get(POSTED_ENVIRON_KEY)
    if known is None:
        known = request.META[POSTED_ENVIRON_KEY] = _read_posted(request.body)
    return known


def _read_posted(body: bytes) -> PostedMessage:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return PostedMessage(None, True)
    if not isinstance(message, dict):
        return PostedMessage(None, True)
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    progress = isinstance(meta, dict) and meta.get("progressToken") is not None
    name = params.get("name") if message.get("method") == "tools/call" else None
    return PostedMessage(name if isinstance(name, str) else None, progress, _refusal(message, body))


def _with_connection_cleanup(job: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        close_old_connections()
        try:
            return job()
        finally:
            close_old_connections()

    return run


async def _in_thread(
    job: Callable[[], Any], *, waiting: bool = False, calling: bool = False
) -> Any:
    quick, waits = _Limiters.get()
    if waiting:
        return await anyio.to_thread.run_sync(_with_connection_cleanup(job), limiter=waits)
    threads = _Limiters.call_threads() if calling else quick
    # The handler's context (its trace above all) goes with the job.
    context = contextvars.copy_context()
    return await asyncio.wrap_future(threads.submit(partial(context.run, job)))


def _token_run(ctx) -> Run:
    """The run as the request's token check read it, moments ago."""
    return ctx.request.scope["wsgi_environ"][RUN_ENVIRON_KEY]


def _run(run_id) -> Run:
    return Run.objects.select_related("policy_version", "budget").get(pk=run_id)


# The requested run's tools by MCP name, for `frozen_input_schema` (set per request).
_request_tools: contextvars.ContextVar[dict[str, NamedTool] | None] = contextvars.ContextVar(
    "fluidbox_mcp_request_tools", default=None
)


def frozen_input_schema(mcp_name: str) -> dict[str, Any] | None:
    """The SDK's `Mcp-Param-*` header check (2026-07-28 era) asks for the called tool's
    input schema. Without this it would run the whole `tools/list` handler, database reads
    included, before every call. The schema a run lists is the frozen one, which never
    changes, so it is taken from the run's own tools in hand; None (nothing to check) for a
    name the run does not have or a tool that failed the schema guard. A tool the run may
    not call now gets its header values checked too, and the gate still refuses it."""
    tools = _request_tools.get()
    tool = tools.get(mcp_name) if tools is not None else None
    return tool.input_schema if tool is not None else None


async def list_tools(ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    run = _token_run(ctx)
    listed = await _in_thread(lambda: run_mcp_catalog(run))
    definitions = listable([tool.definition for tool in listed], ctx.protocol_version)
    return types.ListToolsResult(tools=[types.Tool.model_validate(d) for d in definitions])


def _result(answer: McpAnswer, version: str) -> types.CallToolResult:
    if answer.result is not None:
        return types.CallToolResult.model_validate(carried_result(answer.result, version))
    text = awaiting_text(answer) if answer.pending else answer.content_text
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    token_run = _token_run(ctx)
    tool_call_id = client_call_id(params.meta or ctx.meta)
    arguments = params.arguments if params.arguments is not None else {}

    prefetched = ctx.request.scope["wsgi_environ"].get(PREFETCHED_ENVIRON_KEY)
    if prefetched is not None and prefetched.mcp_name != params.name:
        prefetched = None

    def attempt(
        wait_seconds: float, run: Run | None = None, read: PrefetchedTool | None = None
    ) -> McpAnswer:
        # The first attempt decides on the run (and the tool) the token check has just
        # read, as a REST call does; a later one, after a wait, reads them again (the run's
        # status, its budget, the binding).
        run = run if run is not None else _run(token_run.pk)
        # The agent's trace continues from the request's `_meta` (its W3C `traceparent`).
        with tracing.continue_trace_from_meta(params.meta or ctx.meta):
            return mcp_tool_call(
                run=run,
                mcp_name=params.name,
                arguments=arguments,
                tool_call_id=tool_call_id,
                wait_seconds=wait_seconds,
                read=(read.frozen, read.binding) if read is not None else None,
            )

    answer = await _in_thread(lambda: attempt(0, token_run, prefetched), calling=True)
    deadline = time.monotonic() + approval_wait_bound()
    beat = 0
    while answer.pending and (remaining := deadline - time.monotonic()) > 0:
        beat += 1
        await ctx.session.report_progress(
            beat, None, f"awaiting approval in fluidbox: {awaiting_text(answer)}"
        )
        chunk = min(float(settings.FLUIDBOX_MCP_PROGRESS_SECONDS), remaining)
        answer = await _in_thread(lambda chunk=chunk: attempt(chunk), waiting=True)
    return _result(answer, ctx.protocol_version)


def build_server() -> Server:
    return Server(
        "fluidbox",
        version="1",
        instructions=(
            "Tools of this fluidbox run. Every call passes fluidbox's permission gate; a "
            "denied call returns the reason as a tool error."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=frozen_input_schema,
    )


def asgi_app(streaming: StreamableHTTPSessionManager, plain: StreamableHTTPSessionManager):
    """The managers' ASGI app, with the requested run's tools in `_request_tools`.

    A request that asked for progress is served by the manager that answers with an event
    stream (its notifications reach the client while the call waits); any other by the one
    that answers with one JSON body, which no notification could be sent on anyway. The
    SDK's SSE answer (a task group, memory streams, the event framing) cost a brokered call
    more than a millisecond of the endpoint's CPU."""

    async def app(scope, receive, send) -> None:
        environ = scope.get("wsgi_environ", {})
        _request_tools.set(environ.get(TOOLS_ENVIRON_KEY))
        manager = streaming if environ.get(PROGRESS_ENVIRON_KEY, True) else plain
        await manager.handle_request(scope, receive, send)

    return app


def build_session_manager(*, json_response: bool) -> StreamableHTTPSessionManager:
    return StreamableHTTPSessionManager(
        app=build_server(),
        stateless=True,
        json_response=json_response,
        # Host and origin checks are Django's (ALLOWED_HOSTS); the token is the credential.
        security_settings=None,
        max_request_body_size=MAX_BODY_BYTES,
    )
