"""The demo tracker's MCP tools: two reads, two writes, and a write that checks its credential."""

import hmac
import os

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from demo_mcp.tracker import Issue, IssueStatus, Tracker, UnknownIssue

DEFAULT_EXPECTED_TOKEN = "demo-token"

READ_ONLY = ToolAnnotations(read_only_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)


def presented_token(ctx: Context) -> str | None:
    """The token the caller sent: a bearer header over HTTP, `DEMO_TRACKER_TOKEN` over stdio."""
    headers = ctx.headers
    if headers is None:
        return os.environ.get("DEMO_TRACKER_TOKEN")
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def require_token(ctx: Context) -> None:
    expected = os.environ.get("DEMO_TRACKER_EXPECTED_TOKEN", DEFAULT_EXPECTED_TOKEN)
    presented = presented_token(ctx) or ""
    if not hmac.compare_digest(presented.encode(), expected.encode()):
        raise ToolError("the tracker refused the credential: missing or wrong token")


def build_server(tracker: Tracker | None = None) -> MCPServer:
    tracker = tracker or Tracker.seeded()
    server = MCPServer(
        "demo-tracker",
        version="1.0",
        instructions="A small issue tracker: list, read, open and comment on issues.",
    )

    @server.tool(annotations=READ_ONLY)
    def list_issues(status: IssueStatus | None = None) -> list[Issue]:
        """List the tracker's issues, optionally only those with the given status."""
        return tracker.list(status)

    @server.tool(annotations=READ_ONLY)
    def get_issue(issue_id: int) -> Issue:
        """Read one issue with its comments."""
        try:
            return tracker.get(issue_id)
        except UnknownIssue as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=WRITES)
    def create_issue(title: str, ctx: Context, body: str = "") -> Issue:
        """Open a new issue. Needs the tracker token."""
        require_token(ctx)
        return tracker.create(title, body)

    @server.tool()
    def add_comment(issue_id: int, text: str) -> Issue:
        """Add a comment to an issue."""
        try:
            return tracker.comment(issue_id, text)
        except UnknownIssue as exc:
            raise ToolError(str(exc)) from None

    return server
