"""`POST /v1/mcp`: the run's MCP server (SPEC §8), authenticated by the run session token.

A thin view: DRF authenticates the token (a finished run's is refused with 401), then the
request is handed as it came to the official SDK's streamable-HTTP server (see
`governance/mcp_server/`), which answers it, streaming when it sends progress.
"""

from django.core.exceptions import RequestDataTooBig
from django.db import connection
from django.http import JsonResponse, StreamingHttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from governance.api.parsers import json_refusal
from governance.api.permissions import IsRunner
from governance.authentication import BearerAuthentication, PortalSessionAuthentication
from governance.mcp_server.bridge import bridge
from governance.mcp_server.catalog import named_tools
from governance.mcp_server.names import readable_guess
from governance.mcp_server.server import (
    PREFETCHED_ENVIRON_KEY,
    PROGRESS_ENVIRON_KEY,
    RUN_ENVIRON_KEY,
    TOOLS_ENVIRON_KEY,
    PrefetchedTool,
    in_database_thread,
    posted_message,
)
from governance.models import Run
from governance.run_sessions import run_and_tool_for_session_token


class McpRunAuthentication(BearerAuthentication):
    """The same token check; for a `tools/call`, the called tool and its binding are read
    with the run, in one statement, and handed to the broker (`server.PrefetchedTool`).

    Which frozen tool an MCP name stands for is the run's own listing's answer
    (`catalog.named_tools`); the statement reads the tool the name would be if it is a
    readable one (`names.readable_guess`), and the read is handed on only when the listing
    agrees. Otherwise (a hashed name, a name the run does not have) the broker reads the
    tool itself, as before."""

    def run_for_token(self, digest: str, request) -> Run | None:
        try:
            posted = posted_message(request._request) if request.method == "POST" else None
        except RequestDataTooBig:  # refused with its own answer when the view reads it
            posted = None
        mcp_name = posted.called_tool if posted is not None else None
        guess = readable_guess(mcp_name) if mcp_name is not None else None
        if guess is None:
            return super().run_for_token(digest, request)
        run, read = run_and_tool_for_session_token(digest, guess)
        if run is not None:
            named = named_tools(run).get(mcp_name)
            if named is not None and named.frozen_name == guess:
                frozen, binding = read
                request._request.META[PREFETCHED_ENVIRON_KEY] = PrefetchedTool(
                    mcp_name, frozen, binding
                )
        return run


def _json_rpc_error(code: int, message: str, request_id, status: int) -> JsonResponse:
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return JsonResponse(error, status=status)


def _is_json(headers: list[tuple[str, str]]) -> bool:
    return any(
        name.lower() == "content-type" and value.split(";")[0].strip() == "application/json"
        for name, value in headers
    )


@extend_schema(exclude=True)  # MCP's own JSON-RPC, not a REST resource
class McpEndpointApi(APIView):
    authentication_classes = [McpRunAuthentication, PortalSessionAuthentication]
    permission_classes = [IsRunner]

    def perform_content_negotiation(self, request, force=False):
        # The SDK writes the answers; DRF renders only its own refusals (401, 405), as JSON.
        # MCP clients open the standalone stream with `Accept: text/event-stream` alone, and
        # the transport says a server without one answers 405: a 406 here instead makes the
        # TypeScript SDK (Gemini CLI's) drop the whole server.
        return super().perform_content_negotiation(request, force=True)

    def perform_authentication(self, request):
        # The token check, and the first read of the run's tool names in this process, run
        # on one of the endpoint's database threads, which keep their connection between
        # jobs (`governance/mcp_server/db_threads.py`). This request thread then opens none:
        # with production's default of a new connection per request, that is a PostgreSQL
        # backend start-up saved on every MCP request.
        def authenticate() -> None:
            _ = request.user  # DRF authenticates on first access (raises on a bad token)
            run = getattr(request.auth, "run", None)
            if run is not None:
                named_tools(run)

        in_database_thread(authenticate)

    def _serve(self, request):
        if request.method == "POST":
            # The SDK parses the body itself: what the API's strict parser refuses (nesting
            # that would crash a recursive reader, a key given twice) is refused here too.
            problem = json_refusal(request._request.body)
            if problem is not None:
                return _json_rpc_error(-32700, f"JSON refused - {problem}", None, 400)
            refusal = posted_message(request._request).refusal
            if refusal is not None:
                return _json_rpc_error(refusal.code, refusal.message, refusal.request_id, 400)
        environ = dict(request._request.environ)
        environ["wsgi.input"] = request._request  # Django's length-limited body stream
        run = request.auth.run
        environ[RUN_ENVIRON_KEY] = run
        environ[TOOLS_ENVIRON_KEY] = named_tools(run)  # read once per run and process
        if request.method == "POST":
            environ[PROGRESS_ENVIRON_KEY] = posted_message(request._request).progress_requested
        # The token check opened a database connection; a call that waits for a human must
        # not hold it (the worker threads open their own when they need one).
        connection.close()
        status, headers, body = bridge.respond(environ)
        if status >= 400 and not _is_json(headers):
            # The SDK's transport checks (content type, host, origin, size) answer in plain
            # text; every refusal of this endpoint is JSON.
            text = b"".join(body).decode("utf-8", "replace")[:500]
            return _json_rpc_error(-32600, text, None, status)
        response = StreamingHttpResponse(body, status=status)
        if not any(name.lower() == "content-type" for name, _ in headers):
            del response["Content-Type"]  # a notification's 202 is no HTML page
        for name, value in headers:
            response[name] = value
        return response

    def post(self, request):
        return self._serve(request)

    # No `get`: the standalone event stream a GET opens is refused with 405, as the transport
    # allows. A stateless endpoint never has anything to send on it, and each one held open
    # would take a server thread for as long as the client liked.

    def delete(self, request):
        return self._serve(request)
