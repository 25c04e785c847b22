"""The client half that runs beside an agent: Claude Code's hooks, the stdio MCP bridge and
the git facts they send. Standard library only, and nothing of the server (`app`), so that a
hook starts in tens of milliseconds: an interpreter, `urllib` and `subprocess`.

    agent-memory-client hook session-start|stop|session-end   # stdin: the hook's JSON
    agent-memory-client mcp                                   # MCP over stdio, bridged
"""
