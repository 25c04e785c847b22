"""MCP over stdio with a bounded message size: a line longer than the limit is never held
in memory whole. It is skipped; when its JSON-RPC id can be read from its start, the
server answers that id with an error, so the client is not left waiting."""

from __future__ import annotations

import json
import logging
import sys
from typing import BinaryIO

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

from agent_memory_client.bridge import request_id, skip_rest_of_line

logger = logging.getLogger("agent_memory.mcp")

# Answered "method not found" by the server, under the oversized request's id.
TOO_LARGE_METHOD = "agent-memory/message-too-large"


class BoundedLines:
    """Lines of a binary stream as text, none longer than `max_bytes`."""

    def __init__(self, stream: BinaryIO, max_bytes: int) -> None:
        self._stream = stream
        self._max = max_bytes

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        line = await anyio.to_thread.run_sync(self._stream.readline, self._max + 1)
        if not line:
            raise StopAsyncIteration
        if len(line) <= self._max or (line.endswith(b"\n") and len(line) == self._max + 1):
            return bytes(line).decode("utf-8", errors="replace")
        await anyio.to_thread.run_sync(skip_rest_of_line, self._stream)
        logger.warning("refused an MCP message larger than %d bytes", self._max)
        found, known_id = request_id(bytes(line))
        if not found:
            return "{}"  # not JSON-RPC: the server reports it as a parse failure
        return json.dumps({"jsonrpc": "2.0", "id": known_id, "method": TOO_LARGE_METHOD})


async def serve_stdio(server: MCPServer, max_line_bytes: int) -> None:
    stdin = BoundedLines(sys.stdin.buffer, max_line_bytes)
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
        lowlevel = server._lowlevel_server
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
