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
