"""The MCP wire: photograph a server's tools and call one of them, with the official `mcp` SDK.

Synchronous on purpose: Django views call these from worker threads where no event loop
runs, so each call owns a private event loop (`anyio.run`) for exactly one client session.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import ssl
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, TypeVar

import anyio
import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from fluidbox.canonical import canonical_json
from governance.egress import (
    EgressRefused,
    EgressRules,
    GuardedTransport,
    deployment_allow_list,
)
from governance.mcp_stdio import stdio_environment, stdio_transport
from governance.observability import tracing
from governance.policy.invisible import is_invisible
from governance.schemas import json_scalars
from ledger.redaction import MASK, mask_secrets

TransportKind = Literal["streamable-http", "stdio"]

# A server that paginates forever must not hold a broker thread hostage.
MAX_LIST_PAGES = 100
# A photograph is kept whole (database, every run that binds the connection, each listing):
# past these a listing is refused, whatever its pages (one of 180 MB took a web worker's
# memory, every tenant's requests with it).
MAX_LISTED_TOOLS = 1000
MAX_LISTING_BYTES = 2 * 1024 * 1024
# Secrets shorter than this are not credentials anyone issues; redacting them would
# shred every message (a one-character value matches everywhere).
_MIN_REDACTED_LENGTH = 4
_MAX_SERVER_MESSAGE = 200

# The SDK logs what a misbehaving server sent back (an unparsable body, an error page), and a
# server can echo the credential it received: nothing below CRITICAL leaves the SDK. Its
# client session logs as `client` (the notifications and tools it drops, with their values);
# the console handler masks secrets in every record too (fluidbox/log_masking.py).
logging.getLogger("mcp").setLevel(logging.CRITICAL)
logging.getLogger("client").setLevel(logging.CRITICAL)

_RAW_RESULT: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


@functools.cache
def _tls_context() -> ssl.SSLContext:
    # Building the default context (loading the CA bundle) costs ~30 ms, which an
    # `httpx2.AsyncClient()` pays on every construction: most of a brokered call's overhead
    # when each call opens its own client. One per process, the same verification.
    return httpx2.create_ssl_context()


_T = TypeVar("_T")


# Headers the HTTP layer or the MCP transport sets itself. A credential under one of these
# names would replace it: `Host` sends an allowed address's virtual host somewhere the
# allow-list never named (an ingress routes by it), the others break framing or the session.
_TRANSPORT_HEADERS = frozenset(
    {
        "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade",
        "te", "trailer", "expect", "content-type", "content-encoding", "accept",
        "accept-encoding", "last-event-id", "forwarded", "via",
    }
)  # fmt: skip


def header_name_refused(name: str) -> str | None:
    """Why a credential may not be sent in header `name`, or None."""
    lower = name.lower()
    if lower in _TRANSPORT_HEADERS or lower.startswith(("proxy-", "mcp-", "x-forwarded-")):
        return (
            f"a credential may not be sent as {name}: that header says where or how the "
            "request goes, and the HTTP client or the MCP transport sets it"
        )
    return None


@dataclass(frozen=True)
class McpEndpoint:
    """Where an MCP server lives and the credential the caller injected for this one call."""

    transport: TransportKind
    url: str | None = None
    command: tuple[str, ...] | None = None
    # repr=False: an endpoint printed in a traceback or a log line must not carry the credential.
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    # Which internal hosts this endpoint may reach; None: the deployment's allow-list only.
    egress: EgressRules | None = None

    def __post_init__(self) -> None:
        if self.transport == "streamable-http":
            if not self.url:
                raise ValueError("a streamable-http endpoint needs a url")
        elif self.transport == "stdio":
            if not self.command or not all(isinstance(part, str) for part in self.command):
                raise ValueError("a stdio endpoint needs a non-empty command tuple")
        else:
            raise ValueError(f"unknown MCP transport {self.transport!r}")


@dataclass(frozen=True)
class CallOutcome:
    """A tool call's result as the server sent it, and the digest of the tool that ran."""

    content: list[dict[str, Any]]
    is_error: bool
    # Any JSON value since 2026-07-28 (an object before); None when the server sent none.
    structured: Any
    live_digest: str


class McpWireError(Exception):
    """Base of everything this module raises about a server's behaviour."""


class UpstreamError(McpWireError):
    """The server could not be reached, failed, timed out or spoke nonsense.

    The message is short and never contains a header or env credential value. `sent`: whether
    the request may have reached the server (false only when no connection was made and no
    program started): a call that timed out or was answered with nonsense may have run.
    """

    def __init__(self, message: str, *, sent: bool = True):
        super().__init__(message)
        self.sent = sent


class AddressRefused(UpstreamError):
    """The endpoint's host is, or resolves to, an address fluidbox may not connect to."""


class PlacementRefused(UpstreamError):
    """The credential's header or variable name would change where a request goes or what
    program runs: nothing is sent, no program started."""


class ToolDrifted(McpWireError):
    """The live tool differs from the digest the caller froze (or is gone): nothing was called."""

    def __init__(self, tool_name: str, expected_digest: str, live_digest: str | None) -> None:
        self.tool_name = tool_name
        self.expected_digest = expected_digest
        self.live_digest = live_digest
        state = "is no longer offered" if live_digest is None else "changed since it was frozen"
        super().__init__(f"tool {tool_name!r} {state}; the call was refused")


def tool_digest(tool: Mapping[str, Any]) -> str:
    """sha256 over the whole tool object as the server sent it: any changed byte changes it."""
    return hashlib.sha256(canonical_json(tool).encode("utf-8")).hexdigest()


def tool_set_digest(tools: list[dict[str, Any]]) -> str:
    pairs = sorted((str(tool.get("name")), tool_digest(tool)) for tool in tools)
    return hashlib.sha256(canonical_json(pairs).encode("utf-8")).hexdigest()


def list_tools(endpoint: McpEndpoint, *, timeout: float) -> list[dict[str, Any]]:
    """Every tool the server offers, each the whole object as it came off the wire."""

    async def photograph(client: Client) -> list[dict[str, Any]]:
        # A server that quotes the credential in its listing must not put it in the
        # photograph: the database, the API, admin pages and every run's tool list.
        return _redact_json(await list_all_tools(client), _credential_values(endpoint))

    return _run(endpoint, timeout, photograph)


def call_tool(
    endpoint: McpEndpoint,
    name: str,
    arguments: Mapping[str, Any],
    *,
    expected_digest: str,
    timeout: float,
) -> CallOutcome:
    """Call `name` only if the live definition still hashes to `expected_digest`.

    Listing and calling happen in one client session, so a server cannot show one
    definition to the check and run another. On drift it raises `ToolDrifted` and the
    server never receives a `tools/call`.
    """

    async def checked_call(client: Client) -> CallOutcome | ToolDrifted:
        return await call_if_unchanged(
            client, endpoint, name, arguments, expected_digest, await list_all_tools(client)
        )

    outcome = _run(endpoint, timeout, checked_call)
    if isinstance(outcome, ToolDrifted):
        raise outcome
    return outcome


async def call_if_unchanged(
    client: Client,
    endpoint: McpEndpoint,
    name: str,
    arguments: Mapping[str, Any],
    expected_digest: str,
    tools: list[dict[str, Any]],
) -> CallOutcome | ToolDrifted:
    """Send `tools/call` on `client` only if `name` in `tools` (a listing this session
    received) still hashes to `expected_digest`; else the drift, and nothing is sent."""
    # Compared as photographed: with the credential masked (see `list_tools`).
    secrets = _credential_values(endpoint)
    matching = [_redact_json(tool, secrets) for tool in tools if tool.get("name") == name]
    # Two tools under one name is as untrustworthy as a changed one.
    live_digest = tool_digest(matching[0]) if len(matching) == 1 else None
    if live_digest != expected_digest:
        # Returned, not raised: raising inside the SDK's task groups would wrap it in an
        # ExceptionGroup, and the caller must be able to tell drift from failure.
        return ToolDrifted(name, expected_digest, live_digest)
    # The request's span (MCP conventions); its trace context rides in `params._meta`.
    with tracing.mcp_client_span(
        method="tools/call", tool=name, transport=endpoint.transport, url=endpoint.url
    ) as span:
        params = mcp_types.CallToolRequestParams(
            name=name, arguments=dict(arguments), _meta=span.meta or None
        )
        try:
            raw = await client.session.send_request(
                mcp_types.CallToolRequest(params=params), _RAW_RESULT
            )
        except MCPError as error:
            span.failed(str(error.error.code))
            raise
        span.result(is_error=raw.get("isError") is True)
    # A server that echoes the credential it was given must not carry it into the sandbox.
    return _call_outcome(_redact_json(raw, secrets), live_digest)


async def list_all_tools(client: Client) -> list[dict[str, Any]]:
    """Every tool on an open session, each the whole object as it came off the wire."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    seen_cursors: set[str] = set()
    listed_bytes = 0
    for _ in range(MAX_LIST_PAGES):
        # Requested raw: the SDK's Tool model drops fields it does not know, and a
        # photograph must see every byte the server sent.
        page = await client.session.send_request(
            mcp_types.ListToolsRequest(params=mcp_types.PaginatedRequestParams(cursor=cursor)),
            _RAW_RESULT,
        )
        page_tools = page.get("tools")
        if not isinstance(page_tools, list) or not all(
            isinstance(tool, dict) and isinstance(tool.get("name"), str) for tool in page_tools
        ):
            raise _ProtocolViolation("the server sent a malformed tools/list result")
        tools.extend(page_tools)
        listed_bytes += sum(len(canonical_json(tool)) for tool in page_tools)
        if len(tools) > MAX_LISTED_TOOLS:
            raise _ProtocolViolation(f"the server lists more than {MAX_LISTED_TOOLS} tools")
        if listed_bytes > MAX_LISTING_BYTES:
            raise _ProtocolViolation(
                f"the server's tool definitions run past {MAX_LISTING_BYTES // 2**20} MiB"
            )
        _teach_session_the_listing(client, page, is_whole_listing=cursor is None)
        next_cursor = page.get("nextCursor")
        if next_cursor is None:
            return tools
        if not isinstance(next_cursor, str) or next_cursor in seen_cursors:
            raise _ProtocolViolation("the server's tools/list pagination loops")
        seen_cursors.add(next_cursor)
        cursor = next_cursor
    raise _ProtocolViolation(f"the server's tools/list ran past {MAX_LIST_PAGES} pages")


def _teach_session_the_listing(
    client: Client, page: dict[str, Any], *, is_whole_listing: bool
) -> None:
    # The SDK mirrors `x-mcp-header` arguments into request headers (2026-07-28 servers reject
    # a call without them) only for tools it has absorbed from a listing; the raw request above
    # bypassed that, so the page is absorbed here. `Client.list_tools` does the same for its cache.
    try:
        listing = mcp_types.ListToolsResult.model_validate(page, by_name=False)
    except ValidationError as exc:
        raise _ProtocolViolation("the server sent a malformed tools/list result") from exc
    whole = is_whole_listing and listing.next_cursor is None
    client.session._absorb_tool_listing(listing, complete=whole)


def _call_outcome(raw: dict[str, Any], live_digest: str) -> CallOutcome:
    result_type = raw.get("resultType", "complete")
    if result_type != "complete":
        raise _ProtocolViolation(f"the server answered the call with {str(result_type)[:40]!r}")
    content = raw.get("content")
    if not isinstance(content, list) or not all(isinstance(block, dict) for block in content):
        raise _ProtocolViolation("the server sent a malformed tools/call result")
    # The SDK's reader takes `NaN`, `Infinity` and `1e400`; no JSON answer can carry them on.
    if any(type(item) is float and not math.isfinite(item) for item in json_scalars(raw)):
        raise _ProtocolViolation("the server sent a result that is not JSON (NaN or infinity)")
    return CallOutcome(
        content=content,
        is_error=raw.get("isError") is True,
        structured=raw.get("structuredContent"),
        live_digest=live_digest,
    )


class _ProtocolViolation(Exception):
    """The server answered, but not with something MCP allows."""


def _run(endpoint: McpEndpoint, timeout: float, work: Callable[[Client], Awaitable[_T]]) -> _T:
    if timeout <= 0:
        raise ValueError("timeout must be positive")
    try:
        return anyio.run(partial(_in_session, endpoint, timeout, work))
    except Exception as exc:
        # `from None`: the SDK's own exception text may quote what the server sent back.
        raise failure_of(exc, endpoint, timeout) from None


def failure_of(exc: BaseException, endpoint: McpEndpoint, timeout: float) -> UpstreamError:
    """What an exception out of an MCP session means, worded without any credential."""
    refused = next((leaf for leaf in leaves(exc) if isinstance(leaf, EgressRefused)), None)
    if refused is not None:
        return AddressRefused(str(refused))
    message, sent = _describe(exc, timeout, _credential_values(endpoint))
    return UpstreamError(message, sent=sent)


async def _in_session(
    endpoint: McpEndpoint, timeout: float, work: Callable[[Client], Awaitable[_T]]
) -> _T:
    # One deadline for everything: process start, handshake, listing, call and teardown.
    deadline = anyio.current_time() + timeout
    with anyio.fail_after(timeout):
        async with AsyncExitStack() as stack:
            client = await open_client(stack, endpoint, timeout, deadline)
            return await work(client)


async def open_client(
    stack: AsyncExitStack,
    endpoint: McpEndpoint,
    timeout: float,
    deadline: float,
    message_handler: Callable[[Any], Awaitable[None]] | None = None,
) -> Client:
    """An MCP session on `stack`: the egress-guarded transport, then the handshake.
    `deadline` bounds a stdio server's exit grace when the stack closes."""
    transport = await _open_transport(stack, endpoint, timeout, deadline)
    return await stack.enter_async_context(
        Client(transport, cache=None, read_timeout_seconds=timeout, message_handler=message_handler)
    )


async def _open_transport(
    stack: AsyncExitStack, endpoint: McpEndpoint, timeout: float, deadline: float
) -> Any:
    if endpoint.transport == "streamable-http":
        assert endpoint.url is not None
        rules = endpoint.egress or EgressRules(allowed=deployment_allow_list())
        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=dict(endpoint.headers),
                timeout=httpx2.Timeout(timeout),
                # Every request, redirected ones too, is resolved, checked and pinned. The
                # transport carries the TLS context (a client's `verify` is for its own).
                transport=GuardedTransport(rules, verify=_tls_context()),
            )
        )
        return streamable_http_client(endpoint.url, http_client=http)
    assert endpoint.command is not None
    return stdio_transport(endpoint.command, stdio_environment(endpoint.env), deadline)


def _describe(exc: BaseException, timeout: float, secrets: list[str]) -> tuple[str, bool]:
    """What went wrong, and whether the request may have reached the server."""
    found = list(leaves(exc))
    for leaf in found:
        if isinstance(leaf, TimeoutError | httpx2.TimeoutException):
            return f"the MCP server did not answer within {timeout:g} s", True
    for leaf in found:
        if isinstance(leaf, httpx2.ConnectError | ConnectionRefusedError):
            return "could not connect to the MCP server", False
        if isinstance(leaf, FileNotFoundError | PermissionError):
            return "could not start the MCP server program", False
    for leaf in found:
        if isinstance(leaf, MCPError):
            if leaf.code == mcp_types.REQUEST_TIMEOUT:
                return f"the MCP server did not answer within {timeout:g} s", True
            if leaf.code == mcp_types.CONNECTION_CLOSED:
                return "the MCP server closed the connection", True
            # Redacted before it is cut short: a cut through a secret would leave half of it.
            # And before blanking what a reader cannot see: a credential holding such a
            # character (an emoji's U+FE0F, a soft hyphen, a line break) is spelt as sent
            # only in the server's own text; once blanked, neither it nor a word of it matches.
            text = _redact(leaf.error.message, secrets)
            text = _redact(" ".join(_visible(text).split()), secrets)
            text = text[:_MAX_SERVER_MESSAGE]
            return f"the MCP server returned error {leaf.code}: {text}", True
        if isinstance(leaf, _ProtocolViolation):
            return str(leaf), True
        if isinstance(leaf, ValidationError):
            return "the MCP server sent a response that is not valid MCP", True
        if isinstance(leaf, httpx2.HTTPError | OSError):
            return f"the connection to the MCP server failed ({type(leaf).__name__})", True
    return f"the MCP call failed ({type(found[0]).__name__})", True


def _visible(message: str) -> str:
    """A server's message with every character a reader cannot see (controls, NUL, bidi
    overrides, zero-width, surrogates: `invisible.py`) as a blank: it is recorded
    (PostgreSQL stores no NUL) and shown to the agent and the auditor as it reads."""
    return "".join(" " if is_invisible(ch, layout_is_visible=False) else ch for ch in message)


def leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaves(inner)
    else:
        yield exc


def _credential_values(endpoint: McpEndpoint) -> list[str]:
    values: set[str] = set()
    for value in [*endpoint.headers.values(), *endpoint.env.values()]:
        # "Bearer <token>": a server may echo the token alone.
        values.update(part for part in (value, *value.split()) if len(part) >= _MIN_REDACTED_LENGTH)
    return sorted(values, key=len, reverse=True)


def _redact(text: str, secrets: list[str]) -> str:
    # Each as sent, and as a JSON encoder or an error's repr spells it (a backslash doubled,
    # `/` as `\/`, `+` as `\u002B`): any JSON or Python reader turns those back.
    return mask_secrets(text, secrets)


def _redact_json(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return _redact(value, secrets)
    if isinstance(value, dict):
        return {_redact(str(k), secrets): _redact_json(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_json(item, secrets) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        # A numeric credential (a PIN, an account key) echoed as a JSON number is spelt in
        # the answer exactly as it was sent: masked too (the number becomes the mask).
        spelt = repr(value)
        if _redact(spelt, secrets) != spelt:
            return MASK
    return value
