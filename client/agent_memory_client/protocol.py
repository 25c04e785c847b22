"""What the client half and the server agree on beyond the REST API: the headers a bridge
sends with each MCP message (the server imports these names; the client imports nothing of
the server)."""

from __future__ import annotations

# Where the agent works, as the bridge's git knows it: a write that names no repository is
# filed under REPO_HEADER and records the branch and commit it was written at.
REPO_HEADER = "X-Agent-Memory-Repo"
BRANCH_HEADER = "X-Agent-Memory-Branch"
COMMIT_HEADER = "X-Agent-Memory-Commit"
# Which tool surface the client wants: "agent" leaves out what its hooks already do
# (sessions, pruning, stats, the snapshot); without it, every tool.
TOOLS_HEADER = "X-Agent-Memory-Tools"
AGENT_SURFACE = "agent"

# This server's MCP tools, by the names it registers (app/mcp/server.py's TOOLS): a
# contract test holds the two equal. The hooks take a call of one of these, under a server
# the installer wrote (ours.py), for this server's own: it brings nothing from outside.
TOOL_NAMES = frozenset(
    {"store_memory", "search_memories", "remember", "learn_strategy", "get_strategy_hint",
     "retry_context", "start_session", "end_session", "confirm_memory", "delete_session",
     "snapshot", "run_pruning", "get_access_stats"}
)  # fmt: skip

# Programs that fetch from a URL: a shell command running one brought a page in (the
# client's provenance), and a memory telling an agent to pipe one into a shell is held
# (the server's app/domain/provenance.py). Lower case; PowerShell's are case-blind.
FETCH_PROGRAMS = (
    "curl", "wget", "http", "https", "xh", "aria2c", "fetch", "lynx", "w3m", "links", "elinks",
    "iwr", "irm", "invoke-webrequest", "invoke-restmethod",
)  # fmt: skip

# A draft's evidence (the error, the change, what the user said): each text at most this
# long. The server refuses a longer one; the importer cuts it to fit.
EVIDENCE_CHARS = 600
