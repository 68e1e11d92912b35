"""The tool names a run lists on fluidbox's MCP endpoint, asked with the `mcp` SDK's client.

The hook leaves to the endpoint only calls of tools it lists: another MCP server whose
name merely starts like fluidbox's (`fluidbox__x`) must not pass for it.
"""

from __future__ import annotations

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from runner.deadline import Deadline

# 2026-07-28's self-contained requests: one round trip, no handshake, no session.
_PROTOCOL = "2026-07-28"
_MAX_PAGES = 20


def mcp_tool_names(url: str, token: str, deadline: Deadline) -> frozenset[str]:
    """Every tool name `/v1/mcp` lists for the run now; raises if it cannot say in time."""

    async def listing() -> frozenset[str]:
        seconds = deadline.left()
        with anyio.fail_after(seconds):
            async with httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {token}"},
                timeout=httpx2.Timeout(seconds),
                follow_redirects=False,
                trust_env=False,  # as the hook's own requests: no proxy from the environment
            ) as http:
                transport = streamable_http_client(f"{url.rstrip('/')}/v1/mcp", http_client=http)
                async with Client(
                    transport, mode=_PROTOCOL, cache=None, read_timeout_seconds=seconds
                ) as client:
                    names: set[str] = set()
                    cursor = None
                    for _page in range(_MAX_PAGES):
                        page = await client.list_tools(cursor=cursor)
                        names.update(tool.name for tool in page.tools)
                        cursor = page.next_cursor
                        if not cursor:
                            break
                    return frozenset(names)

    return anyio.run(listing)
