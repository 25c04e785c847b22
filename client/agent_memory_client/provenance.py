"""Which tools bring content from outside the repository and the user into a session: the
one rule, for every client (docs/security.md, "Memory that a web page cannot teach").

A session that used one is recorded as having read untrusted input, with its sources
(`POST /sessions/{id}/sources`): a memory written while it is open waits for a person
before other sessions are handed it (app/domain/provenance.py on the server).

- **Web tools**: fetch and search, by each client's name for them. Their source is the URL
  (a search: `search:<query>`).
- **Another MCP server's tools**: any tool of a server other than this one (an issue
  tracker's, a browser's, a documentation server's) returns text someone else wrote. Its
  source is `tool:<name>`. This server's own tools (remember, search_memories, ...) are not.
- **Shell commands that fetch**: a command that runs a downloader (curl, wget, httpie,
  aria2c, a text browser) with a URL, or `gh` reading issues, pull requests, releases,
  gists or the API (text others wrote). Its sources are the URLs in it (or `command:gh`).
  Git's own fetches (clone, pull) are left out: a repository's own remote is everyday work,
  and what it brings is code the session then reads as the repository's.

Reading a file of the repository is not untrusted input here: the repository is the user's.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Web tools by client: Claude Code, Gemini CLI, Codex, Cursor.
WEB_TOOLS = frozenset(
    {"WebFetch", "WebSearch", "web_fetch", "google_web_search", "web_search", "fetch"}
)
# This server's tools, as every client names them (bare, or after its MCP prefix).
OWN_TOOLS = frozenset(
    {
        "remember", "search_memories", "store_memory", "get_memory", "confirm_memory",
        "get_strategy_hint", "learn_strategy", "start_session", "end_session", "recall",
        "list_memories", "supersede_memory", "memory_feedback", "retry_context",
    }
)  # fmt: skip
# An MCP tool's name: Claude Code and Codex `mcp__<server>__<tool>`, Gemini CLI
# `mcp_<server>_<tool>`.
_MCP_NAME = re.compile(
    r"^mcp__(?P<server>.+?)__(?P<tool>.+)$|^mcp_(?P<gserver>[^_]+)_(?P<gtool>.+)$"
)
_OUR_SERVER = re.compile(r"memory", re.IGNORECASE)
_DOWNLOADERS = frozenset(
    {"curl", "wget", "http", "https", "xh", "aria2c", "lynx", "w3m", "links", "elinks"}
)
_GH_READS = frozenset({"issue", "pr", "release", "gist", "api", "discussion", "search"})
_URL = re.compile(r"\b(?:https?|ftp)://[^\s'\"<>`|;&)]+", re.IGNORECASE)
MAX_SOURCES = 10  # of one tool call


def is_own_tool(name: str, server: str = "") -> bool:
    """A tool of this server: one of its names, under a server whose name says memory."""
    found = _MCP_NAME.match(name)
    if found:
        server = found.group("server") or found.group("gserver") or ""
        name = found.group("tool") or found.group("gtool") or ""
    return name in OWN_TOOLS and (not server or bool(_OUR_SERVER.search(server)))


def is_mcp_tool(name: str) -> bool:
    return bool(_MCP_NAME.match(name))


def command_sources(command: str) -> list[str]:
    """The sources a shell command fetched from: the URLs a downloader was given, or `gh`
    reading what others wrote; none for any other command."""
    words = command.replace("\\\n", " ").split()
    programs = {w.rsplit("/", 1)[-1] for w in words}
    urls = list(dict.fromkeys(_URL.findall(command)))
    if programs & _DOWNLOADERS and urls:
        return urls[:MAX_SOURCES]
    for i, word in enumerate(words[:-1]):
        if word.rsplit("/", 1)[-1] == "gh" and words[i + 1] in _GH_READS:
            return urls[:MAX_SOURCES] or [f"command:gh {words[i + 1]}"]
    return []


def tool_sources(
    tool: str, tool_input: dict[str, Any], server: str = "", mcp: bool = False
) -> list[str]:
    """The untrusted sources one tool call brought into the session; none for a tool that
    brings nothing from outside (or for this server's own). `server`: the MCP server, where
    the client names it apart (Gemini CLI's mcp_context); `mcp`: the call is an MCP tool's
    whatever its name (Cursor's afterMCPExecution, whose names carry no prefix)."""
    if tool in WEB_TOOLS:
        url = tool_input.get("url") or tool_input.get("uri")
        if isinstance(url, str) and url:
            return [url]
        query = tool_input.get("query") or tool_input.get("prompt")
        return [f"search:{query}" if isinstance(query, str) and query else f"tool:{tool}"]
    if (mcp or server or is_mcp_tool(tool)) and not is_own_tool(tool, server):
        return [f"tool:{tool}" if not server else f"tool:{server}/{tool}"]
    return []
