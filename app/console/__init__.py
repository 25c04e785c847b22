"""The web console: server-rendered pages for the people who own the memory (a door, like
app/api and app/mcp: it parses, calls the services, renders)."""
