"""Upstream MCP sessions kept open between brokered calls: one bounded pool per web process.

Opening a session costs a handshake (discovery or `initialize`), a connection and, at the
end, a DELETE; against a nearby upstream that was most of a brokered call. The pool keeps
sessions open on one event loop thread per process (the SDK is async, the broker runs in
sync Django threads) and lends each session to one call at a time.

What it never does:
- share a session across credentials, URLs, organizations or allow-lists: a session's key
  is a digest of everything its endpoint carries (the unsealed credential included) and of
  the connection it serves. A reconnect (new secret), an edited URL or allow-list is a new
  key, and the first call under it closes the connection's sessions under the old one;
- connect where the egress guard did not look: each session has its own guarded transport,
  which resolves and checks every request it sends, as a one-shot call does;
- call a tool on a listing older than `FLUIDBOX_MCP_TOOLS_TTL` seconds: the drift check
  compares the frozen digest with a listing this same session received within the TTL,
  and a `notifications/tools/list_changed` from the server discards the listing at once;
- send a `tools/call` twice: only a failure that proves the call never reached the server
  (its re-listing failed, the connection was refused, or the server no longer knows the
  session) makes it open a new session and try there; any other failure is the call's,
  and the session is closed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import hashlib
import math
import os
import threading
import time
from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import mcp_types
from django.conf import settings
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from fluidbox.canonical import canonical_json
from governance.mcp_wire import (
    CallOutcome,
    McpEndpoint,
    ToolDrifted,
    call_if_unchanged,
    failure_of,
    leaves,
    list_all_tools,
    open_client,
)

# Sessions idle this long are closed by the reaper, which looks this often.
_REAP_EVERY_SECONDS = 5.0
# On top of a call's own timeout: how long a caller waits for the pool's loop to answer
# before giving up on it (only a wedged loop could take that long).
_LOOP_GRACE_SECONDS = 30.0
# A dropped `subscriptions/listen` stream is opened again after this pause.
_RELISTEN_SECONDS = 1.0


class _Session:
    """One open upstream session, owned by a task that holds its context managers open."""

    def __init__(self, key: str, scope: str, endpoint: McpEndpoint) -> None:
        self.key = key
        self.scope = scope
        self.endpoint = endpoint
        self.client: Any = None
        self.tools: list[dict[str, Any]] | None = None
        self.listed_at = 0.0
        self.opened_at = self.used_at = time.monotonic()
        self.calls = 0
        self.busy = False
        self.closed = False
        self.suspect = False  # the transport reported a fault: not lent again
        self.retired = False  # its connection moved to a new key: closed when its call ends
        self._closing = asyncio.Event()
        self.task: asyncio.Task | None = None

    async def on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.tools = None
        elif isinstance(message, Exception):
            self.suspect = True

    def fresh_listing(self, ttl: float) -> list[dict[str, Any]] | None:
        if self.tools is None or time.monotonic() - self.listed_at >= ttl:
            return None
        return self.tools

    def remember_listing(self, tools: list[dict[str, Any]]) -> None:
        self.tools = tools
        self.listed_at = time.monotonic()

    def close(self) -> None:
        self.closed = True
        self._closing.set()

    async def hold_open(self, timeout: float, ready: asyncio.Future) -> None:
        try:
            async with AsyncExitStack() as stack:
                # A stdio server gets its short exit grace whenever the session ends.
                self.client = await open_client(
                    stack, self.endpoint, timeout, math.inf, self.on_message
                )
                ready.set_result(None)
                async with anyio.create_task_group() as background:
                    background.start_soon(self._follow_tool_changes)
                    await self._closing.wait()
                    background.cancel_scope.cancel()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller waiting to open it
            if not ready.done():
                ready.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.closed = True

    async def _follow_tool_changes(self) -> None:
        """On a 2026-07-28 session, subscribe to `tools/list_changed` (a 2025 session gets it
        on its standing stream, see `on_message`). Best effort: the TTL is the guarantee."""
        if self.client.session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        while not self.closed:
            acknowledged = False
            try:
                async with self.client.listen(tools_list_changed=True) as subscription:
                    honored = subscription.honored
                    if honored is None or not honored.tools_list_changed:
                        return
                    acknowledged = True
                    async for _event in subscription:
                        self.tools = None
            except Exception:  # noqa: BLE001 - a server without listen, or a dropped stream
                if not acknowledged:
                    return  # it does not offer the subscription: the TTL alone applies
            # Events may have been missed while not subscribed: list again before trusting.
            self.tools = None
            await anyio.sleep(_RELISTEN_SECONDS)


def session_key(scope: str, generation: int, endpoint: McpEndpoint) -> str:
    """Everything that decides who a session speaks to and as whom, as one digest (the
    credential is inside it but never kept in the clear as a key)."""
    material = {
        "scope": scope,
        "generation": generation,
        "transport": endpoint.transport,
        "url": endpoint.url,
        "command": list(endpoint.command or ()),
        "headers": sorted(endpoint.headers.items()),
        "env": sorted(endpoint.env.items()),
        "egress": repr(endpoint.egress),
    }
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()


class SessionPool:
    """Idle sessions by key; at most `per_key` idle per key and `total` open in all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid: int | None = None
        self._idle: dict[str, list[_Session]] = {}
        self._open: set[_Session] = set()

    # The caller's side (any thread)

    def call_tool(
        self,
        *,
        scope: str,
        generation: int,
        endpoint: McpEndpoint,
        name: str,
        arguments: Mapping[str, Any],
        expected_digest: str,
        timeout: float,
    ) -> CallOutcome:
        """`mcp_wire.call_tool` on a pooled session (same errors, same drift refusal).

        `scope` names the connection (sessions of one scope under an older key are closed
        when a newer one appears); `generation` is its authorization generation.
        """
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        key = session_key(scope, generation, endpoint)
        work = self._call(key, scope, endpoint, name, arguments, expected_digest, timeout)
        try:
            outcome = self._submit(work).result(timeout + _LOOP_GRACE_SECONDS)
        except concurrent.futures.TimeoutError:
            raise failure_of(TimeoutError(), endpoint, timeout) from None
        except Exception as exc:
            # `from None`: the SDK's own exception text may quote what the server sent back.
            raise failure_of(exc, endpoint, timeout) from None
        if isinstance(outcome, ToolDrifted):
            raise outcome
        return outcome

    def close_all(self) -> None:
        """Close every session (tests, and a process that shuts its pool down)."""
        loop = self._running_loop()
        if loop is not None:
            asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(_LOOP_GRACE_SECONDS)

    def snapshot(self) -> list[dict[str, Any]]:
        """The open sessions as plain facts (scope, calls served, whether a listing is
        cached, idle or lent), for tests and for an operator's debugging."""
        loop = self._running_loop()
        if loop is None:
            return []

        async def describe() -> list[dict[str, Any]]:
            idle = {id(session) for sessions in self._idle.values() for session in sessions}
            return [
                {
                    "scope": session.scope,
                    "calls": session.calls,
                    "listed": session.tools is not None,
                    "idle": id(session) in idle,
                    "closed": session.closed,
                }
                for session in self._open
            ]

        return asyncio.run_coroutine_threadsafe(describe(), loop).result(_LOOP_GRACE_SECONDS)

    def _running_loop(self) -> asyncio.AbstractEventLoop | None:
        with self._lock:
            return self._loop if self._pid == os.getpid() else None

    def _submit(self, coroutine) -> concurrent.futures.Future:
        loop = self._ensure_loop()
        # The caller's context (its trace span, above all) goes with the work.
        context = contextvars.copy_context()
        future: concurrent.futures.Future = concurrent.futures.Future()

        def start() -> None:
            task = loop.create_task(coroutine, context=context)
            asyncio.futures._chain_future(task, future)  # type: ignore[attr-defined]

        loop.call_soon_threadsafe(start)
        return future

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            # After a fork (gunicorn's workers) the parent's loop thread does not exist here.
            if self._loop is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="fluidbox-mcp-sessions", daemon=True
                ).start()
                self._loop, self._pid = loop, os.getpid()
                self._idle, self._open = {}, set()
                asyncio.run_coroutine_threadsafe(self._reap_forever(), loop)
            return self._loop

    # The loop's side

    async def _call(
        self,
        key: str,
        scope: str,
        endpoint: McpEndpoint,
        name: str,
        arguments: Mapping[str, Any],
        expected_digest: str,
        timeout: float,
    ) -> CallOutcome | ToolDrifted:
        with anyio.fail_after(timeout):
            session, reused = await self._checkout(key, scope, endpoint, timeout)
            try:
                return await self._checked_call(
                    session, name, arguments, expected_digest, reused=reused
                )
            except _NeverSent:
                session.close()
                # The reused session was dead; the call never left. Once, on a new one.
                session, _ = await self._checkout(key, scope, endpoint, timeout, reuse=False)
                return await self._checked_call(
                    session, name, arguments, expected_digest, reused=False
                )
            finally:
                self._checkin(session)

    async def _checked_call(
        self,
        session: _Session,
        name: str,
        arguments: Mapping[str, Any],
        expected_digest: str,
        *,
        reused: bool,
    ) -> CallOutcome | ToolDrifted:
        ttl = float(settings.FLUIDBOX_MCP_TOOLS_TTL)
        tools = session.fresh_listing(ttl)
        try:
            if tools is None:
                try:
                    tools = await list_all_tools(session.client)
                except Exception:
                    if reused:
                        raise _NeverSent() from None
                    raise
                session.remember_listing(tools)
            session.calls += 1
            outcome = await call_if_unchanged(
                session.client, session.endpoint, name, arguments, expected_digest, tools
            )
        except _NeverSent:
            raise
        except Exception as exc:
            session.close()
            if reused and _never_arrived(exc):
                raise _NeverSent() from None
            raise
        except BaseException:  # a deadline or cancellation mid-call: the session is unusable
            session.close()
            raise
        if isinstance(outcome, ToolDrifted):
            session.tools = None  # the next call on this session lists again
        return outcome

    async def _checkout(
        self, key: str, scope: str, endpoint: McpEndpoint, timeout: float, *, reuse: bool = True
    ) -> tuple[_Session, bool]:
        # A connection's old keys (a rotated secret, an edited URL) are closed the moment a
        # call under its new key arrives: nothing sends with the old credential again.
        for other_key, sessions in list(self._idle.items()):
            if other_key != key and sessions and sessions[0].scope == scope:
                for stale in self._idle.pop(other_key):
                    stale.close()
        for stale in [s for s in self._open if s.scope == scope and s.key != key]:
            if stale.busy:
                stale.retired = True  # its call, begun before the change, ends; then it goes
            else:
                stale.close()
        idle = self._idle.get(key, [])
        while reuse and idle:
            session = idle.pop()
            if self._usable(session):
                session.busy = True
                return session, True
            session.close()
        session = _Session(key, scope, endpoint)
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        # A fresh context: the session outlives the call that opened it and must not keep
        # that call's trace span as its own.
        session.task = asyncio.get_running_loop().create_task(
            session.hold_open(timeout, ready), context=contextvars.Context()
        )
        self._open.add(session)
        session.task.add_done_callback(lambda _task, s=session: self._forget(s))
        try:
            await ready
        except BaseException:
            session.close()
            session.task.cancel()
            raise
        session.busy = True
        return session, False

    def _usable(self, session: _Session) -> bool:
        max_age = float(settings.FLUIDBOX_MCP_SESSION_MAX_AGE)
        return (
            not session.closed
            and not session.suspect
            and not session.retired
            and time.monotonic() - session.opened_at < max_age
        )

    def _checkin(self, session: _Session) -> None:
        session.busy = False
        session.used_at = time.monotonic()
        if not self._usable(session):
            session.close()
            return
        idle = self._idle.setdefault(session.key, [])
        pooled = sum(len(sessions) for sessions in self._idle.values())
        if len(idle) >= settings.FLUIDBOX_MCP_SESSIONS_PER_CONNECTION or (
            pooled >= settings.FLUIDBOX_MCP_SESSIONS_MAX
        ):
            session.close()  # past the bounds: it served its call and goes
            return
        idle.append(session)

    def _forget(self, session: _Session) -> None:
        self._open.discard(session)
        idle = self._idle.get(session.key)
        if idle and session in idle:
            idle.remove(session)
            if not idle:
                del self._idle[session.key]

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(_REAP_EVERY_SECONDS)
            self.reap()

    def reap(self) -> None:
        idle_limit = float(settings.FLUIDBOX_MCP_SESSION_IDLE)
        now = time.monotonic()
        for key, sessions in list(self._idle.items()):
            for session in list(sessions):
                if now - session.used_at >= idle_limit or not self._usable(session):
                    sessions.remove(session)
                    session.close()
            if not sessions:
                del self._idle[key]

    async def _close_all(self) -> None:
        sessions = list(self._open)
        self._idle = {}
        for session in sessions:
            session.close()
        tasks = [s.task for s in sessions if s.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=_LOOP_GRACE_SECONDS)


class _NeverSent(Exception):
    """A reused session failed in a way that proves the server never got the `tools/call`."""


def _never_arrived(exc: BaseException) -> bool:
    for leaf in leaves(exc):
        if isinstance(leaf, httpx2.ConnectError | ConnectionRefusedError):
            return True
        # The server answered that it does not know this session (it restarted or expired
        # it): per the transport's rules it processed nothing on it.
        if isinstance(leaf, MCPError) and leaf.error.message in _SESSION_UNKNOWN_MESSAGES:
            return True
    return False


# The SDK client's wording for a 404 on a known session id, and the SDK server's own.
_SESSION_UNKNOWN_MESSAGES = frozenset({"Session terminated", "Session not found"})

pool = SessionPool()
