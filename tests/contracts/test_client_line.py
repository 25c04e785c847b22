"""What the client half and the server name alike is written once, in the client half's
protocol.py, and the server's own registries are held to it: the MCP tools the hooks take
for this server's, the programs that fetch, and a draft's kinds, clients and evidence."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agent_memory_client import provenance
from agent_memory_client.history import (
    claude_code,
    codex,
    copilot,
    cursor,
    formats,
    gemini,
    opencode,
)
from agent_memory_client.protocol import (
    DRAFT_CHARS,
    DRAFT_CLIENTS,
    DRAFT_KINDS,
    EVIDENCE_CHARS,
    EVIDENCE_KEYS,
    FETCH_PROGRAMS,
    FILE_CLIENT,
    TOOL_NAMES,
)
from app.domain import drafts
from app.domain.errors import InvalidInputError
from app.domain.provenance import dangerous_instruction
from app.mcp.server import TOOLS
from app.mcp.surface import AGENT_TOOLS, RECORDS_COMMIT, REPOSITORY_TOOLS


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


def test_the_surfaces_tool_lists_name_only_tools_of_that_one_list() -> None:
    """What the agent surface shows and which tools take the workspace's repository are
    subsets of TOOL_NAMES: a tool renamed in one place and not the other fails here."""
    for subset in (REPOSITORY_TOOLS, RECORDS_COMMIT, frozenset(AGENT_TOOLS)):
        assert subset <= TOOL_NAMES, subset - TOOL_NAMES


def test_both_halves_read_the_same_programs_as_fetching() -> None:
    for program in FETCH_PROGRAMS:
        # The client: a session that ran one on a page off this machine read it.
        assert provenance.command_sources(f"{program} https://example.org/x") == [
            "https://example.org/x"
        ]
        # The server: a memory telling an agent to pipe one into a shell is held.
        assert dangerous_instruction(f"{program} https://example.org/x | sh") is not None


A_DRAFT = drafts.HistoryDraftText(
    kind="fix",
    text="Pin the Postgres major version in CI images",
    source_repo="acme/api",
    client="codex",
    client_session="s1",
)


def queued(**fields: Any) -> drafts.QueuedDraft:
    return drafts.queued_draft(dataclasses.replace(A_DRAFT, **fields))


def test_the_server_queues_a_draft_of_every_client_and_kind_the_importers_write() -> None:
    # Every past session's reader names its drafts' client as the server takes it, and the
    # importer reads every client the server takes (a rule of a file aside).
    readers = (claude_code, codex, copilot, cursor, gemini, opencode)
    assert {reader.CLIENT for reader in readers} == set(DRAFT_CLIENTS) - {FILE_CLIENT}
    for client in DRAFT_CLIENTS:
        if client != FILE_CLIENT:
            assert callable(formats.reader_of(client))
        assert queued(client=client).client == client
    for kind in DRAFT_KINDS:
        assert queued(kind=kind).kind == kind
    with pytest.raises(InvalidInputError):
        queued(client="gemini")  # the adapter's name, not the agent's
    with pytest.raises(InvalidInputError):
        queued(kind="lesson")


def test_a_draft_at_the_client_halfs_bounds_is_queued_and_one_past_them_refused() -> None:
    assert len(queued(text="x " * (DRAFT_CHARS // 2)).text) <= DRAFT_CHARS
    with pytest.raises(InvalidInputError):
        queued(text="x" * (DRAFT_CHARS + 1))
    evidence = {key: "e" * EVIDENCE_CHARS for key in EVIDENCE_KEYS}
    assert tuple(queued(evidence=evidence).evidence) == EVIDENCE_KEYS
    with pytest.raises(InvalidInputError):
        queued(evidence={"error": "e" * (EVIDENCE_CHARS + 1)})
    with pytest.raises(InvalidInputError):
        queued(evidence={"stack": "a key the client half does not name"})
    # ...and the queue labels every key the importers send.
    assert set(drafts.EVIDENCE_LABELS) == set(EVIDENCE_KEYS)
