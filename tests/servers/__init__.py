"""Real MCP servers for the tests, run on 127.0.0.1 in a subprocess."""
