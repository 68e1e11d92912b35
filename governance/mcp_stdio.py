"""The stdio side of the MCP wire: a local server run by the control plane, with a minimal
environment, a hard deadline and its stderr discarded."""

import os
import signal
import subprocess
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import mcp_types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

STDIO_EXIT_GRACE_SECONDS = 0.25
MAX_STDIO_LINE_BYTES = 16 * 1024 * 1024


# Variables that decide what a program loads, runs or connects to rather than what it reads.
# A connection's creator names the credential's variable, and the command allow-list means
# nothing if that name can be NODE_OPTIONS (`--import=data:…` runs their script), LD_PRELOAD,
# PATH or PYTHONPATH. Compared upper-cased: npm reads `npm_config_*` too.
_PROGRAM_CONTROLLING_NAMES = frozenset(
    {
        "PATH", "HOME", "SHELL", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS",
        "CDPATH", "PROMPT_COMMAND", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES",
        "RESOLV_HOST_CONF", "GLIBC_TUNABLES", "TMPDIR", "CLASSPATH", "JDK_JAVA_OPTIONS",
        "MAVEN_OPTS", "GRADLE_OPTS", "GOFLAGS", "GOPATH", "GOROOT", "GOTOOLCHAIN", "GOPROXY",
        "GOENV", "OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES", "SSL_CERT_FILE",
        "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY",
        "ALL_PROXY", "NO_PROXY", "BROWSER", "EDITOR", "VISUAL", "PAGER", "LESSOPEN",
        "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS", "VIRTUAL_ENV",
    }
)  # fmt: skip
_PROGRAM_CONTROLLING_PREFIXES = (
    "LD_", "DYLD_", "MALLOC_", "BASH_FUNC_", "XDG_", "PYTHON", "NODE_", "NPM_CONFIG_", "YARN_",
    "PNPM_", "COREPACK_", "DENO_", "BUN_", "PERL", "RUBY", "GEM_", "BUNDLE_", "JAVA_",
    "_JAVA_", "GIT_", "PHP", "UV_", "PIP_", "CONDA", "LUA_",
)  # fmt: skip


def env_name_refused(name: str) -> str | None:
    """Why a credential may not be handed to a stdio server in variable `name`, or None."""
    upper = name.upper()
    if upper in _PROGRAM_CONTROLLING_NAMES or upper.startswith(_PROGRAM_CONTROLLING_PREFIXES):
        return (
            f"a credential may not be placed in {name}: that variable decides what the "
            "program loads or runs, and the control plane runs it"
        )
    return None


def stdio_environment(credential_env: Mapping[str, str]) -> dict[str, str]:
    """Only what a program needs to run, plus the credential: never the control plane's secrets."""
    basics = {"PATH": os.environ.get("PATH", os.defpath), "HOME": os.environ.get("HOME", "/")}
    return basics | dict(credential_env)


@asynccontextmanager
async def stdio_transport(
    command: tuple[str, ...], env: dict[str, str], deadline: float
) -> AsyncIterator[tuple[Any, Any]]:
    # Not the SDK's stdio_client: its teardown is shielded and may wait ~4 s for a server to
    # exit, past the caller's deadline. Here a server gets a short grace that never runs past
    # the deadline, then its process group is killed. Its stderr is discarded so a server
    # that prints its env credential cannot put it in the control plane's logs.
    process = await anyio.open_process(
        list(command), env=env, stderr=subprocess.DEVNULL, start_new_session=True
    )
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as pumps:
            pumps.start_soon(_pump_server_output, process, to_session)
            pumps.start_soon(_pump_session_output, process, from_session)
            try:
                yield from_server, to_server
            finally:
                pumps.cancel_scope.cancel()
    finally:
        await _stop_stdio_server(process, deadline)
        for stream in (to_session, from_server, to_server, from_session):
            stream.close()


async def _pump_server_output(process: Process, sink: MemoryObjectSendStream[Any]) -> None:
    assert process.stdout is not None
    async with sink:
        pending = b""
        async for chunk in process.stdout:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            if len(pending) > MAX_STDIO_LINE_BYTES:
                return  # a runaway line: end the connection rather than buffer without bound
            for line in lines:
                if not line.strip():
                    continue
                try:
                    message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValidationError:
                    # Stray output (a banner, a print) is skipped, unlogged: it may hold secrets.
                    continue
                try:
                    await sink.send(SessionMessage(message))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return


async def _pump_session_output(
    process: Process, source: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    assert process.stdin is not None
    async with source:
        async for session_message in source:
            line = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
            try:
                await process.stdin.send(line.encode("utf-8") + b"\n")
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return  # the server is gone; its closed stdout tells the session


async def _stop_stdio_server(process: Process, deadline: float) -> None:
    with anyio.CancelScope(shield=True):
        assert process.stdin is not None
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await process.stdin.aclose()
        grace = min(STDIO_EXIT_GRACE_SECONDS, deadline - anyio.current_time())
        with anyio.move_on_after(max(grace, 0.0)):
            await process.wait()
        if process.returncode is None:
            # Only while the leader is unreaped is its pid surely still our process group.
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        with anyio.move_on_after(STDIO_EXIT_GRACE_SECONDS):
            await process.aclose()
