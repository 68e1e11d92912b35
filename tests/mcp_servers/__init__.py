"""Real MCP servers for tests: a configurable one and fixtures that run them."""
