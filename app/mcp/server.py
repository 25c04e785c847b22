"""MCP tools: thin adapters from tool arguments to the services (no rule of their own).

Each tool call is one unit of work, committed when the tool returns, like a REST request.
Unknown arguments are refused like unknown JSON fields, and a refusal comes back as a tool
error whose text is the same problem object a REST client gets (status, detail, fields).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Annotated, Any
from uuid import UUID

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Tool as MCPTool
from pydantic import Field, ValidationError

from agent_memory_client.protocol import AGENT_SURFACE
from app import __version__
from app.domain.compact import render_compact_search
from app.domain.errors import AppError, InvalidInputError, UnauthorizedError
from app.domain.filters import FilterRequest
from app.domain.inputs.budgets import presentation
from app.domain.inputs.learning import Attempt, RememberRequest, StrategyAttempt
from app.domain.inputs.mappings import from_mapping
from app.domain.inputs.memories import MemoryRequest
from app.domain.inputs.retry import FileState, RetryRequest
from app.domain.inputs.search import SearchRequest
from app.domain.memory import DEFAULT_CONFIDENCE, DEFAULT_MEMORY_TYPE, DEFAULT_TRUST
from app.domain.principal import Principal
from app.domain.problems import invalid_input_problem, problem_of
from app.domain.sessions import KeyChange, SessionEnd, SessionRequest
from app.domain.snapshot import render_markdown
from app.mcp.briefs import render_session_end_brief, render_session_start_brief, render_store_brief
from app.mcp.surface import AGENT_TOOLS, current_workspace, tool_schema, with_workspace
from app.runtime import Runtime
from app.services.scope import Services, services_for
from app.shapes import render_hint, render_learned, render_prune, render_search

# A write's repository: required (null says global), unless a bridge names the workspace's.
FiledUnder = Annotated[
    str | None, Field(description="Default: this repository. null: global (every repository).")
]
Personal = Annotated[bool, Field(description="Your person's own preference, not the team's.")]

# Who the current tool call is for: set by the /mcp route from the request's key, or by
# `agent-memory mcp` for the process.
current_principal: ContextVar[Principal | None] = ContextVar("mcp_principal", default=None)
# The runtime of the server handling the call (set by AgentMemoryMcp.call_tool).
current_runtime: ContextVar[Callable[[], Runtime] | None] = ContextVar("mcp_runtime", default=None)

INSTRUCTIONS = (
    "Long-term memory shared across sessions. Search it before planning; remember what is "
    "worth keeping (a decision and why, an error's cause, a pattern); never secrets. A memory "
    "marked possibly stale: check it against the code, then confirm_memory it or remember the "
    "corrected one. Without session hooks: start_session and snapshot first, end_session last."
)


def _problem_text(exc: BaseException) -> str | None:
    """The problem object for the first typed or parse error in the cause chain."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, AppError):
            return json.dumps(problem_of(seen), ensure_ascii=False)
        if isinstance(seen, ValidationError):
            return json.dumps(invalid_input_problem(list(seen.errors())), ensure_ascii=False)
        seen = seen.__cause__
    return None


class AgentMemoryMcp(MCPServer):
    """The tools below, for the caller the door authenticated (`current_principal`), over
    the runtime this server was built for. An unknown argument is refused the way REST
    refuses an unknown field, and every refusal is a problem object."""

    def __init__(self, get_runtime: Callable[[], Runtime]) -> None:
        super().__init__(name="agent-memory", version=__version__, instructions=INSTRUCTIONS)
        self._get_runtime = get_runtime
        self._arguments: dict[str, frozenset[str]] = {}

    async def list_tools(self) -> list[MCPTool]:
        place = current_workspace.get()
        tools = await super().list_tools()
        if place.surface == AGENT_SURFACE:
            tools = [tool for tool in tools if tool.name in AGENT_TOOLS]
        return [
            tool.model_copy(
                update={
                    "description": " ".join((tool.description or "").split()),
                    "input_schema": tool_schema(tool.name, tool.input_schema, place),
                }
            )
            for tool in tools
        ]

    async def _argument_names(self, name: str) -> frozenset[str] | None:
        if not self._arguments:
            for tool in await super().list_tools():
                self._arguments[tool.name] = frozenset(tool.input_schema.get("properties", {}))
        return self._arguments.get(name)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        token = current_runtime.set(self._get_runtime)
        try:
            known = await self._argument_names(name)
            unknown = sorted(set(arguments) - known) if known is not None else []
            if unknown:
                refusal = InvalidInputError("Extra inputs are not permitted", field=unknown[0])
                raise ToolError(json.dumps(problem_of(refusal), ensure_ascii=False))
            arguments = with_workspace(name, arguments, current_workspace.get())
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            text = _problem_text(exc)
            if text is None:
                raise
            raise ToolError(text) from None
        finally:
            current_runtime.reset(token)


@asynccontextmanager
async def call() -> AsyncIterator[Services]:
    """One tool call: the caller's services in one transaction."""
    principal = current_principal.get()
    get_runtime = current_runtime.get()
    if principal is None or get_runtime is None:
        raise ToolError("not authenticated") from UnauthorizedError("not authenticated")
    async with services_for(get_runtime(), principal) as services:
        yield services


async def store_memory(
    content: str,
    source_repo: FiledUnder,
    memory_type: str = DEFAULT_MEMORY_TYPE,
    category: str | None = None,
    tags: list[str] | None = None,
    task_id: str | None = None,
    trust_level: str = DEFAULT_TRUST,
    confidence: str = DEFAULT_CONFIDENCE,
    pinned: bool = False,
    source: str = "mcp",
    name: str | None = None,
    metadata: dict[str, Any] | None = None,
    context: str | None = None,
    git_branch: str | None = None,
    git_commit: str | None = None,
    files: list[str] | None = None,
    personal: Personal = False,
) -> dict[str, Any]:
    """When a memory needs its memory_type (decision, error_pattern, code_pattern,
    anti_pattern, ...) or tags; for a plain learning `remember` is simpler. Known content is
    reinforced, not duplicated. Never secrets."""
    asked = MemoryRequest(
        content=content,
        memory_type=memory_type,
        category=category,
        tags=tags,
        source_repo=source_repo,
        task_id=task_id,
        trust_level=trust_level,
        confidence=confidence,
        pinned=pinned,
        source=source,
        name=name,
        metadata=metadata,
        context=context,
        git_branch=git_branch,
        git_commit=git_commit,
        files=files,
        personal=personal,
    )
    async with call() as services:
        outcome = await services.memories.store(asked)
    return render_store_brief(outcome).model_dump(mode="json")


async def search_memories(
    query: str,
    source_repo: str | None = None,
    memory_type: list[str] | None = None,
    tags: list[str] | None = None,
    limit: int = 10,
    alpha: float | None = None,
    min_trust: str | None = None,
    max_tokens: int | None = None,
    floor: bool = True,
    format: str = "compact",
    scope: str | None = None,
    git_branch: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> str:
    """Before planning or when stuck: search long-term memory (keyword and semantic),
    best first, a line per match with its id, then the memory. Global memories too
    (scope="repo": not them). Empty query: the newest. since/until: 7d, 2026-11-01.
    format="full": JSON."""
    asked = SearchRequest(
        q=query,
        filter=FilterRequest(
            source_repo=source_repo,
            memory_type=memory_type,
            tags=tags,
            min_trust=min_trust,
            scope=scope,
            since=since,
            until=until,
        ),
        limit=limit,
        alpha=alpha,
        floor=floor,
        git_branch=git_branch,
    )
    shown, budget = presentation(format, max_tokens)
    async with call() as services:
        response = await services.search.search(asked)
    if shown == "full":
        return json.dumps(render_search(response).model_dump(mode="json"), ensure_ascii=False)
    return render_compact_search(response, datetime.now(UTC), budget)


async def remember(
    text: str,
    source_repo: FiledUnder,
    category: str | None = None,
    name: str | None = None,
    reasoning: str | None = None,
    confidence: str | None = None,
    references: list[str] | None = None,
    context: str | None = None,
    git_branch: str | None = None,
    git_commit: str | None = None,
    files: list[str] | None = None,
    personal: Personal = False,
) -> dict[str, Any]:
    """When you learn what a later session should know (a decision and why, an error's
    real cause and fix, a pattern that worked or to avoid): record it in words that stand
    alone. Never secrets."""
    # No trust_level: an MCP caller is an agent, and writes as one (RememberRequest's default).
    asked = RememberRequest(
        text, source_repo, category, name, reasoning, confidence, references, context,
        git_branch, git_commit, files, personal=personal,
    )  # fmt: skip
    async with call() as services:
        result = await services.learning.remember(asked)
    # The store's brief, with the learning's own message.
    brief = render_store_brief(result.outcome).model_copy(update={"message": result.message})
    return brief.model_dump(mode="json", exclude_none=True)


async def learn_strategy(
    task_description: str,
    total_attempts: int,
    quality_score: float,
    source_repo: FiledUnder,
    plan_steps: list[str] | None = None,
    plan_summary: str | None = None,
    attempt_history: list[dict[str, Any]] | None = None,
    files_changed: list[str] | None = None,
    model: str | None = None,
    task_id: str | None = None,
) -> dict[str, Any]:
    """After a task succeeded on the first attempt with quality_score >= 7: keep its
    plan_steps as a strategy that get_strategy_hint offers for similar tasks."""
    history = [from_mapping(Attempt, a, "attempt_history") for a in attempt_history or []]
    draft = StrategyAttempt(
        task_description, total_attempts, quality_score, plan_steps, plan_summary,
        history, files_changed, model, source_repo, task_id,
    )  # fmt: skip
    async with call() as services:
        result = await services.learning.learn_strategy(draft)
    return render_learned(result).model_dump(mode="json")


async def get_strategy_hint(task: str, source_repo: str) -> dict[str, Any]:
    """Before planning: a plan that worked for a similar task here, to adapt; empty
    when none is close."""
    async with call() as services:
        hint = await services.learning.hint(task, source_repo)
    return render_hint(hint).model_dump(mode="json")


async def retry_context(
    task_description: str,
    plan_summary: str = "",
    current_files: list[dict[str, str]] | None = None,
    previous_files: list[dict[str, str]] | None = None,
    validation_output: str = "",
    diagnosis: dict[str, Any] | None = None,
    attempt_number: int = 1,
    full_context_tokens: int | None = None,
) -> dict[str, Any]:
    """On a retry, instead of resending everything: what changed since the last
    attempt (a diff per file {path, content}), the latest error and the diagnosis
    {root_cause?, reason?, suggested_action?}. Nothing is stored."""
    asked = RetryRequest(
        task_description=task_description,
        plan_summary=plan_summary,
        current_files=[from_mapping(FileState, f, "current_files") for f in current_files or []],
        previous_files=[from_mapping(FileState, f, "previous_files") for f in previous_files or []],
        validation_output=validation_output,
        diagnosis=diagnosis,
        attempt_number=attempt_number,
        full_context_tokens=full_context_tokens,
    )
    async with call() as services:
        return await services.learning.retry_context(asked)


async def start_session(
    source_repo: str | None = None, agent: str | None = None, task: str | None = None
) -> dict[str, Any]:
    """For clients without session hooks: open a session in a repository (pruning
    what nobody uses); returns its id and the capture settings. Then `snapshot`;
    `end_session` when done."""
    async with call() as services:
        started = await services.sessions.start(SessionRequest(source_repo, agent, task))
    brief = render_session_start_brief(started.session, started.pruning, started.capture)
    return brief.model_dump(mode="json")


async def end_session(
    session_id: str,
    status: str,
    summary: str | None = None,
    key_changes: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """When the work is done: end the session as completed or failed, with a summary
    and key changes ({file, action, description}) that the next snapshot shows."""
    try:
        session = UUID(session_id)
    except ValueError as exc:
        raise InvalidInputError("session_id must be a UUID", field="session_id") from exc
    changes = [from_mapping(KeyChange, c, "key_changes") for c in key_changes or []]
    async with call() as services:
        ended = await services.sessions.end(session, SessionEnd(status, summary, changes))
    return render_session_end_brief(ended).model_dump(mode="json")


async def delete_session(session_id: str) -> dict[str, Any]:
    """Admins: delete a session so that no snapshot shows it (its memories stay)."""
    try:
        session = UUID(session_id)
    except ValueError as exc:
        raise InvalidInputError("session_id must be a UUID", field="session_id") from exc
    async with call() as services:
        await services.sessions.delete(session)
    return {"deleted": str(session)}


async def confirm_memory(memory_id: str, git_commit: str | None = None) -> dict[str, Any]:
    """A memory marked possibly stale still holds (you checked the code): clear the
    mark. When it no longer holds, remember the corrected one instead."""
    try:
        memory = UUID(memory_id)
    except ValueError as exc:
        raise InvalidInputError("memory_id must be a UUID", field="memory_id") from exc
    async with call() as services:
        confirmed = await services.lifecycle.confirm(memory, git_commit)
    return {"id": str(confirmed.id), "version": confirmed.version, "possibly_stale": False}


async def snapshot(
    source_repo: str | None = None, max_chars: int | None = None, max_tokens: int | None = None
) -> str:
    """The repository's memory as markdown, most recent first; max_tokens drops the
    oldest lines to fit."""
    async with call() as services:
        built = await services.sessions.snapshot(source_repo, max_chars, max_tokens)
    return render_markdown(built)


async def run_pruning(source_repo: str | None = None, dry_run: bool = False) -> dict[str, Any]:
    """Admins: archive memories nobody uses (never deletes); dry_run lists them."""
    async with call() as services:
        report = await services.lifecycle.prune(source_repo, dry_run)
    return render_prune(report).model_dump(mode="json")


async def get_access_stats(source_repo: str | None = None) -> dict[str, Any]:
    """For a person checking on the memory: counts, health, the most used, what the
    next prune would archive."""
    async with call() as services:
        return await services.stats.stats(source_repo)


# Every tool, and whether it answers structured JSON (True) or text (False).
TOOLS: tuple[tuple[Callable[..., Awaitable[Any]], bool], ...] = (
    (store_memory, True),
    (search_memories, False),
    (remember, True),
    (learn_strategy, True),
    (get_strategy_hint, True),
    (retry_context, True),
    (start_session, True),
    (end_session, True),
    (confirm_memory, True),
    (delete_session, True),
    (snapshot, True),
    (run_pruning, True),
    (get_access_stats, True),
)


# What MCPServer serves beside tools: none of it is ours. Left registered, a client shows
# the agent resource tools (Claude Code adds three, about 2,100 characters a request).
NOT_OURS = ("resources/", "prompts/", "completion/")


def build_mcp_server(get_runtime: Callable[[], Runtime]) -> MCPServer:
    server = AgentMemoryMcp(get_runtime)
    for tool, structured in TOOLS:
        server.add_tool(tool, structured_output=structured)
    handlers = server._lowlevel_server._request_handlers
    for method in [m for m in handlers if m.startswith(NOT_OURS)]:
        del handlers[method]
    return server
