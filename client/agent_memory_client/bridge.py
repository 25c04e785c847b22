"""MCP over stdio for a server that runs elsewhere: each JSON-RPC line on stdin is posted to
the server's /mcp (its URL, its key), and the answer goes to stdout.

The bridge runs where the agent works, which HTTP cannot know: with every message it sends
the repository, branch and commit git sees here (protocol.py's headers), so a write that
names no repository is filed under this one and records the commit it was written at.
`--tools agent` asks for the surface of a client whose hooks own sessions (Claude Code's
plugin). A line longer than the limit is never held whole: it is skipped and, when its id
can be read, answered with an error."""

from __future__ import annotations

import json
import re
import sys
import urllib.parse
from typing import Any, BinaryIO

from agent_memory_client.connection import Connection, Deadline, Unavailable
from agent_memory_client.git import head_of, repository_name
from agent_memory_client.protocol import BRANCH_HEADER, COMMIT_HEADER, REPO_HEADER, TOOLS_HEADER

MAX_MESSAGE_BYTES = 16 * 1024 * 1024  # the server's default MAX_BODY_BYTES
MESSAGE_BUDGET_S = 60.0
CHUNK = 64 * 1024
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
# JSON-RPC's "server error" range: the server could not be asked, or refused the key.
UNREACHABLE = -32000
TOO_LARGE = -32600
REQUEST_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?[0-9]{1,18})')


def request_id(head: bytes) -> tuple[bool, Any]:
    """The JSON-RPC id read from the start of a message: (found, id)."""
    found = REQUEST_ID.search(head[:1000])
    return (False, None) if found is None else (True, json.loads(found.group(1)))


def skip_rest_of_line(stream: BinaryIO) -> None:
    """Read past the rest of an over-long line without holding it."""
    while True:
        chunk = stream.readline(CHUNK)
        if not chunk or chunk.endswith(b"\n"):
            return


def error_answer(line: bytes, code: int, message: str) -> bytes | None:
    """An error answer under the request's id; None for a notification (no id)."""
    found, known_id = request_id(line)
    if not found:
        return None
    error = {"code": code, "message": message}
    return json.dumps({"jsonrpc": "2.0", "id": known_id, "error": error}).encode()


def workspace_headers(
    cwd: str, repository: str | None, line: bytes, tools: str | None
) -> dict[str, str]:
    """Where the agent works, percent-encoded (a folder's name may be any text). HEAD and
    its branch only with a tool call, asked of git again each time: a commit made
    mid-session is the one the next memory records."""
    commit, branch = head_of(cwd) if b'"tools/call"' in line else (None, None)
    found = {REPO_HEADER: repository, BRANCH_HEADER: branch, COMMIT_HEADER: commit}
    headers = {name: urllib.parse.quote(value) for name, value in found.items() if value}
    return headers | ({TOOLS_HEADER: tools} if tools else {})


def forward(
    line: bytes, url: str | None, api_key: str | None, headers: dict[str, str]
) -> bytes | None:
    try:
        server = Connection(url, api_key, Deadline(MESSAGE_BUDGET_S))
        status, kind, body = server.request(
            "POST", "/mcp", raw=line, headers={**MCP_HEADERS, **headers}
        )
    except Unavailable as exc:
        print(f"agent-memory mcp: {exc.detail}", file=sys.stderr)
        return error_answer(line, UNREACHABLE, f"agent-memory {exc.detail}")
    if status == 202 or not body:
        return None
    if status >= 400 and "problem" in kind:  # the key was refused: not a JSON-RPC answer
        detail = str(json.loads(body).get("detail"))
        print(f"agent-memory mcp: {detail}", file=sys.stderr)
        return error_answer(line, UNREACHABLE, detail)
    return body


def bridge(
    stdin: BinaryIO,
    stdout: BinaryIO,
    cwd: str,
    url: str | None = None,
    api_key: str | None = None,
    tools: str | None = None,
    max_line_bytes: int = MAX_MESSAGE_BYTES,
) -> int:
    repository = repository_name(cwd)  # the work's name is asked once; HEAD per tool call
    while line := stdin.readline(max_line_bytes + 1):
        if len(line) > max_line_bytes and not line.endswith(b"\n"):
            skip_rest_of_line(stdin)
            answer = error_answer(line, TOO_LARGE, f"message larger than {max_line_bytes} bytes")
        elif not line.strip():
            continue
        else:
            answer = forward(line, url, api_key, workspace_headers(cwd, repository, line, tools))
        if answer is not None:
            stdout.write(answer.rstrip(b"\n") + b"\n")
            stdout.flush()
    return 0
