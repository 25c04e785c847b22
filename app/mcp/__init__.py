"""The same capabilities as MCP tools, over streamable HTTP (/mcp) and stdio."""
