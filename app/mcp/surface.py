"""What an MCP client is shown and where its writes go: the workspace a bridge beside the
agent names (agent_memory_client.protocol's headers), the tool surface it asks for, and
the tools' schemas as compact as an agent needs them (every request pays for them)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from agent_memory_client.protocol import (
    AGENT_SURFACE,
    BRANCH_HEADER,
    COMMIT_HEADER,
    REPO_HEADER,
    TOOLS_HEADER,
)


@dataclass(frozen=True, slots=True)
class Workspace:
    """Where the agent works, as a bridge beside it says (agent_memory_client.protocol):
    a write that names no repository is filed under this one, at this commit."""

    repository: str | None = None
    branch: str | None = None
    commit: str | None = None
    surface: str | None = None


NOWHERE = Workspace()
current_workspace: ContextVar[Workspace] = ContextVar("mcp_workspace", default=NOWHERE)


def workspace_of(headers: Mapping[str, str]) -> Workspace:
    def said(name: str) -> str | None:
        value = headers.get(name)
        return urllib.parse.unquote(value) if value else None

    return Workspace(
        said(REPO_HEADER), said(BRANCH_HEADER), said(COMMIT_HEADER), said(TOOLS_HEADER)
    )


# The tools that take a repository: without one, the workspace's. A write must name one
# (null: global, every repository) unless the workspace does.
REPOSITORY_TOOLS = frozenset(
    {"store_memory", "remember", "learn_strategy", "search_memories", "get_strategy_hint",
     "snapshot"}
)  # fmt: skip
# ... and record the branch and commit they were written at, when filed under it.
RECORDS_COMMIT = frozenset({"store_memory", "remember"})
# The surface for a client whose hooks own sessions, pruning and the snapshot (Claude Code's
# plugin): each tool with the arguments it shows (the others are still taken).
AGENT_TOOLS: dict[str, frozenset[str]] = {
    "search_memories": frozenset(
        {"query", "source_repo", "scope", "memory_type", "limit", "since"}
    ),
    "remember": frozenset({"text", "context", "files", "source_repo"}),
    "get_strategy_hint": frozenset({"task"}),
    "learn_strategy": frozenset(
        {"task_description", "total_attempts", "quality_score", "plan_steps"}
    ),
    "confirm_memory": frozenset({"memory_id"}),
}


def with_workspace(name: str, arguments: dict[str, Any], place: Workspace) -> dict[str, Any]:
    """The call's arguments with the workspace's repository (and, for a write filed under
    it, its branch and commit) where the caller named none."""
    if name not in REPOSITORY_TOOLS:
        return arguments
    filled = dict(arguments)
    if "source_repo" not in filled and place.repository is not None:
        filled["source_repo"] = place.repository
    if name in RECORDS_COMMIT and filled.get("source_repo") == place.repository:
        for field, value in (("git_branch", place.branch), ("git_commit", place.commit)):
            if value is not None and filled.get(field) is None:
                filled[field] = value
    return filled


def _compact(schema: dict[str, Any]) -> dict[str, Any]:
    """A property's schema without what costs an agent tokens and tells it nothing: the
    generated title, and `anyOf [X, null]` with a null default (an omitted argument)."""
    shown = {k: v for k, v in schema.items() if k != "title"}
    options = shown.get("anyOf")
    if shown.get("default", 0) is None and isinstance(options, list) and len(options) == 2:
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1:
            del shown["anyOf"], shown["default"]
            shown = {**kept[0], **shown}
    return shown


def tool_schema(name: str, schema: dict[str, Any], place: Workspace) -> dict[str, Any]:
    properties = {k: _compact(v) for k, v in schema.get("properties", {}).items()}
    required = list(schema.get("required", []))
    if place.surface == AGENT_SURFACE and name in AGENT_TOOLS:
        properties = {k: v for k, v in properties.items() if k in AGENT_TOOLS[name]}
    if place.repository is not None and name in REPOSITORY_TOOLS:
        required = [r for r in required if r != "source_repo"]  # the workspace's, omitted
    required = [r for r in required if r in properties]
    compact = {"type": "object", "properties": properties, "additionalProperties": False}
    return compact | ({"required": required} if required else {})
