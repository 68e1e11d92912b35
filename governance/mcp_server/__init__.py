"""fluidbox as an MCP server: `POST /v1/mcp`, the run's brokered tools behind the gate."""
