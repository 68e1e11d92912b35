"""A live fluidbox and the official `mcp` SDK client, in either protocol era."""

from __future__ import annotations

from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.runner_live.conftest import (  # noqa: F401
    approver_key,
    create_run,
    demo_org,
)

# The two eras the pinned SDK speaks: the initialize handshake, and 2026-07-28's
# self-contained requests (no handshake, no session).
ERAS = ["legacy", "2026-07-28"]


@pytest.fixture(params=ERAS)
def era(request) -> str:
    return request.param


@asynccontextmanager
async def mcp_client(base_url: str, token: str, era: str):
    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(60)
    ) as http:
        transport = streamable_http_client(f"{base_url}/v1/mcp", http_client=http)
        async with Client(transport, mode=era, cache=None, read_timeout_seconds=60) as client:
            yield client


def with_client(base_url: str, token: str, era: str, work):
    """Run `await work(client)` in a fresh event loop; returns its result."""

    async def main():
        async with mcp_client(base_url, token, era) as client:
            return await work(client)

    return anyio.run(main)
