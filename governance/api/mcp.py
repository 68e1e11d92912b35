"""`POST /v1/mcp`: the run's MCP server (SPEC §8), authenticated by the run session token.

A thin view: DRF authenticates the token (a finished run's is refused with 401), then the
request is handed as it came to the official SDK's streamable-HTTP server (see
`governance/mcp_server/`), which answers it, streaming when it sends progress.
"""

from django.db import connection
from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from governance.api.permissions import IsRunner
from governance.mcp_server.bridge import bridge
from governance.mcp_server.server import RUN_ENVIRON_KEY


@extend_schema(exclude=True)  # MCP's own JSON-RPC, not a REST resource
class McpEndpointApi(APIView):
    permission_classes = [IsRunner]

    def _serve(self, request):
        environ = dict(request._request.environ)
        environ["wsgi.input"] = request._request  # Django's length-limited body stream
        environ[RUN_ENVIRON_KEY] = str(request.auth.run_id)
        # The token check opened a database connection; a call that waits for a human must
        # not hold it (the worker threads open their own when they need one).
        connection.close()
        status, headers, body = bridge.respond(environ)
        response = StreamingHttpResponse(body, status=status)
        for name, value in headers:
            response[name] = value
        return response

    def post(self, request):
        return self._serve(request)

    def get(self, request):
        return self._serve(request)

    def delete(self, request):
        return self._serve(request)
