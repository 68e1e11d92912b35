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
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import mcp_types as types
from django.conf import settings
from django.db import close_old_connections
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from governance.mcp_server.calls import (
    McpAnswer,
    approval_wait_bound,
    awaiting_text,
    client_call_id,
    mcp_tool_call,
)
from governance.mcp_server.catalog import run_mcp_catalog
from governance.mcp_server.db_threads import DatabaseThreads
from governance.models import Run
from governance.observability import tracing
from governance.schemas import MAX_ARGUMENT_BYTES

RUN_ENVIRON_KEY = "fluidbox.mcp_run_id"
# A request body larger than this is refused before it is parsed (arguments ≤ 256 KiB).
MAX_BODY_BYTES = 2 * MAX_ARGUMENT_BYTES
_QUICK_THREADS = 40


class _Limiters:
    """Quick database work and approval waits draw threads from separate pools, so calls
    waiting for a human never starve the ones that are not. Quick work runs on threads that
    keep their database connection between calls (`db_threads.py`); a wait's thread holds
    none while it waits."""

    quick: DatabaseThreads | None = None
    waits: anyio.CapacityLimiter | None = None
    _lock = threading.Lock()

    @classmethod
    def get(cls) -> tuple[DatabaseThreads, anyio.CapacityLimiter]:
        with cls._lock:
            if cls.quick is None:  # created on the loop that uses them
                cls.quick = DatabaseThreads(_QUICK_THREADS, "fluidbox-mcp-db")
                cls.waits = anyio.CapacityLimiter(settings.FLUIDBOX_MCP_MAX_WAITING)
        return cls.quick, cls.waits


def _with_connection_cleanup(job: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        close_old_connections()
        try:
            return job()
        finally:
            close_old_connections()

    return run


async def _in_thread(job: Callable[[], Any], *, waiting: bool = False) -> Any:
    quick, waits = _Limiters.get()
    if waiting:
        return await anyio.to_thread.run_sync(_with_connection_cleanup(job), limiter=waits)
    # The handler's context (its trace above all) goes with the job.
    context = contextvars.copy_context()
    return await asyncio.wrap_future(quick.submit(partial(context.run, job)))


def _run_id(ctx) -> str:
    return ctx.request.scope["wsgi_environ"][RUN_ENVIRON_KEY]


def _run(run_id: str) -> Run:
    return Run.objects.select_related("policy_version", "budget").get(pk=run_id)


async def list_tools(ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    run_id = _run_id(ctx)
    listed = await _in_thread(lambda: run_mcp_catalog(_run(run_id)))
    return types.ListToolsResult(
        tools=[types.Tool.model_validate(tool.definition) for tool in listed]
    )


def _result(answer: McpAnswer) -> types.CallToolResult:
    if answer.result is not None:
        return types.CallToolResult.model_validate(answer.result)
    text = awaiting_text(answer) if answer.pending else answer.content_text
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    run_id = _run_id(ctx)
    tool_call_id = client_call_id(params.meta or ctx.meta)
    arguments = params.arguments if params.arguments is not None else {}

    def attempt(wait_seconds: float) -> McpAnswer:
        # The agent's trace continues from the request's `_meta` (its W3C `traceparent`).
        with tracing.continue_trace_from_meta(params.meta or ctx.meta):
            return mcp_tool_call(
                run=_run(run_id),
                mcp_name=params.name,
                arguments=arguments,
                tool_call_id=tool_call_id,
                wait_seconds=wait_seconds,
            )

    answer = await _in_thread(lambda: attempt(0))
    deadline = time.monotonic() + approval_wait_bound()
    beat = 0
    while answer.pending and (remaining := deadline - time.monotonic()) > 0:
        beat += 1
        await ctx.session.report_progress(
            beat, None, f"awaiting approval in fluidbox: {awaiting_text(answer)}"
        )
        chunk = min(float(settings.FLUIDBOX_MCP_PROGRESS_SECONDS), remaining)
        answer = await _in_thread(lambda chunk=chunk: attempt(chunk), waiting=True)
    return _result(answer)


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
    )


def build_session_manager() -> StreamableHTTPSessionManager:
    return StreamableHTTPSessionManager(
        app=build_server(),
        stateless=True,
        json_response=False,
        # Host and origin checks are Django's (ALLOWED_HOSTS); the token is the credential.
        security_settings=None,
        max_request_body_size=MAX_BODY_BYTES,
    )
