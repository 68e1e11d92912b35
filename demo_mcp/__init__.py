"""A demo issue tracker served over MCP, bundled so fluidbox has a real server to broker."""
