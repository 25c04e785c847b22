"""What the product does; called by the HTTP routes and the MCP tools alike."""
