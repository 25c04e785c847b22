"""What the client half and the server name alike, written once: the headers a bridge sends
with each MCP message, this server's MCP tools, the programs that fetch, and a draft's kinds,
sources, evidence and bounds. The server imports these names; the client imports nothing of
the server (tests/contracts/test_client_line.py holds the server's registries to them)."""

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

# A draft for the review queue (POST /drafts), as the importers write it and the server
# checks it (app/domain/drafts.py). A failure a change fixed; a user's standing rule; how
# the project is built, tested, run or deployed.
DRAFT_KINDS = ("fix", "instruction", "convention")
# Where a draft comes from: an agent CLI's past sessions (history/, by the name the agent
# gives itself), or FILE_CLIENT, a rule a person wrote in a file agents read (rule_files/).
FILE_CLIENT = "file"
DRAFT_CLIENTS = (
    "claude-code", "codex", "gemini-cli", "cursor", "copilot-cli", "opencode", FILE_CLIENT,
)  # fmt: skip
# A draft's text and its key (the client's own for "the same lesson", across sessions) at
# most this long: the server refuses longer, the importers cut to fit.
DRAFT_CHARS = 500
DRAFT_KEY_CHARS = 200
# A draft's evidence (the error, the change, what the user said): these keys and no other,
# each text at most EVIDENCE_CHARS long. The server refuses a longer one; the importer cuts
# it to fit.
EVIDENCE_KEYS = ("error", "failed", "change", "command", "said", "shown", "distilled_by", "written")
EVIDENCE_CHARS = 600
# A source (the page or the command an outsider's text came from) as the server keeps one:
# longer is cut, by the server and by the client's session state alike.
SOURCE_CHARS = 300
