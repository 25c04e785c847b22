"""MCP over stdio for a server that runs elsewhere: each JSON-RPC line on stdin goes to the
server's /mcp through the typed client (its URL, its key), and the answer goes to stdout.

For clients that only spawn processes: the tools, their rules and the key's tenant are the
server's, exactly as over HTTP. Started inside a git work tree, the bridge gives the tools
that take a repository this one (app/git_repository.py) when a call names none, so that the
agent's memories are filed where the hooks and the CLI file them."""

from __future__ import annotations

import json
import sys
from typing import BinaryIO

from app.client import ClientError, MemoryClient
from app.mcp.stdio import request_id, skip_rest_of_line

# The tools whose `source_repo` defaults to the repository the bridge runs in.
REPOSITORY_TOOLS = frozenset(
    {"store_memory", "remember", "search_memories", "get_strategy_hint", "learn_strategy",
     "start_session", "snapshot"}
)  # fmt: skip
# JSON-RPC's "server error" range: the server could not be asked, or refused the key.
UNREACHABLE = -32000
TOO_LARGE = -32600


def _error(line: bytes, code: int, message: str) -> bytes | None:
    """An error answer under the request's id; None for a notification (no id)."""
    found, known_id = request_id(line)
    if not found:
        return None
    error = {"code": code, "message": message}
    return json.dumps({"jsonrpc": "2.0", "id": known_id, "error": error}).encode()


def with_repository(line: bytes, repository: str | None) -> bytes:
    """A tools/call of a repository tool that names no source_repo, given `repository`."""
    if repository is None:
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line
    params = message.get("params") if isinstance(message, dict) else None
    if (
        message.get("method") != "tools/call"
        or not isinstance(params, dict)
        or params.get("name") not in REPOSITORY_TOOLS
    ):
        return line
    arguments = params.get("arguments")
    if not isinstance(arguments, dict) or arguments.get("source_repo"):
        return line
    params["arguments"] = {**arguments, "source_repo": repository}
    return json.dumps(message).encode() + b"\n"


def bridge(
    client: MemoryClient,
    stdin: BinaryIO,
    stdout: BinaryIO,
    max_line_bytes: int,
    repository: str | None = None,
) -> int:
    while line := stdin.readline(max_line_bytes + 1):
        if len(line) > max_line_bytes and not line.endswith(b"\n"):
            skip_rest_of_line(stdin)
            answer = _error(line, TOO_LARGE, f"message larger than {max_line_bytes} bytes")
        elif not line.strip():
            continue
        else:
            try:
                answer = client.mcp(with_repository(line, repository))
            except ClientError as exc:
                print(f"agent-memory mcp: {exc.detail}", file=sys.stderr)
                answer = _error(line, UNREACHABLE, exc.detail)
        if answer is not None:
            stdout.write(answer.rstrip(b"\n") + b"\n")
            stdout.flush()
    return 0
