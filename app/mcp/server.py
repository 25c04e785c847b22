"""MCP tools: thin adapters from tool arguments to the services (no rule of their own).

Each tool call is one unit of work, committed when the tool returns, like a REST request.
Unknown arguments are refused like unknown JSON fields, and a refusal comes back as a tool
error whose text is the same problem object a REST client gets (status, detail, fields).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from pydantic import ConfigDict, ValidationError

from app import __version__
from app.domain.errors import AppError, InvalidInputError, UnauthorizedError
from app.domain.inputs import (
    Attempt,
    FileState,
    KeyChange,
    MemoryDraft,
    RememberDraft,
    RetryDraft,
    SearchDraft,
    SessionDraft,
    SessionEnd,
    StrategyAttempt,
    from_mapping,
    presentation,
)
from app.domain.snapshot import render_markdown
from app.runtime import Runtime
from app.services.auth import Principal
from app.services.scope import Services, services_for
from app.services.sessions import start_session as begin_session
from app.views import (
    invalid_input_problem,
    problem_of,
    render_compact_search,
    render_hint,
    render_learned,
    render_prune,
    render_search,
    render_session,
    render_session_start,
    render_store,
)

# Who the current tool call is for: set by the /mcp route from the request's key, or by
# `agent-memory mcp` for the process.
current_principal: ContextVar[Principal | None] = ContextVar("mcp_principal", default=None)

INSTRUCTIONS = (
    "agent-memory: long-term memory for coding agents. Search before planning "
    "(search_memories, get_strategy_hint); record what you learn (remember, store_memory); "
    "after a first-attempt success call learn_strategy; on a retry call retry_context."
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
    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            text = _problem_text(exc)
            if text is None:
                raise
            raise ToolError(text) from None


def _forbid_unknown_arguments(tool: Tool) -> None:
    base = tool.fn_metadata.arg_model
    strict: type[ArgModelBase] = type(
        base.__name__,
        (base,),
        {
            "model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True),
            "__module__": base.__module__,
        },
    )
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)


def build_mcp_server(get_runtime: Callable[[], Runtime]) -> MCPServer:
    server = AgentMemoryMcp(name="agent-memory", version=__version__, instructions=INSTRUCTIONS)

    @asynccontextmanager
    async def call() -> AsyncIterator[Services]:
        """One tool call: the caller's services in one transaction."""
        principal = current_principal.get()
        if principal is None:
            raise ToolError("not authenticated") from UnauthorizedError("not authenticated")
        async with services_for(get_runtime(), principal) as services:
            yield services

    @server.tool()
    async def store_memory(
        content: str,
        memory_type: str = "general",
        category: str | None = None,
        tags: list[str] | None = None,
        source_repo: str | None = None,
        task_id: str | None = None,
        trust_level: str = "agent",
        confidence: str = "medium",
        pinned: bool = False,
        source: str = "mcp",
        name: str | None = None,
        metadata: dict[str, Any] | None = None,
        context: str | None = None,
    ) -> dict[str, Any]:
        """Store a memory (decision, error_pattern, code_pattern, strategy, learning, ...).
        Known content in the same repo is reinforced instead of duplicated. `context` is the
        situation it came from (the task, the question it answers): searched with it."""
        draft = MemoryDraft(
            content, memory_type, category, tags, source_repo, task_id, trust_level,
            confidence, pinned, source, name, metadata, context,
        )  # fmt: skip
        async with call() as services:
            outcome = await services.memories.store(draft)
        memory = outcome.memory
        label = f"{memory.name or memory.content[:60]} ({memory.category or memory.memory_type})"
        message = (
            f"Stored: {label}"
            if outcome.status == "stored"
            else f"Reinforced: {label} — observation count incremented"
        )
        return {"message": message, **render_store(outcome).model_dump(mode="json")}

    @server.tool(structured_output=False)
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
    ) -> str:
        """Search long-term memory before planning or when stuck: decisions, error
        patterns, code patterns and learnings from earlier sessions, best match first
        (keyword and semantic ranking together). Answers one line per match: rank, score,
        type, age, tags, id, then the memory (and the situation it came from). Matches far
        below the best are left out (floor=false keeps them); max_tokens packs the best
        that fit and says how many were left out. An empty query lists the newest.
        format="full" answers the full rows as JSON."""
        draft = SearchDraft(
            q=query,
            source_repo=source_repo,
            memory_type=memory_type,
            tags=tags,
            limit=limit,
            alpha=alpha,
            min_trust=min_trust,
            floor=floor,
        )
        shown, budget = presentation(format, max_tokens)
        async with call() as services:
            response = await services.search.search(draft)
        if shown == "full":
            return json.dumps(render_search(response).model_dump(mode="json"), ensure_ascii=False)
        return render_compact_search(response, datetime.now(UTC), budget)

    @server.tool()
    async def remember(
        text: str,
        source_repo: str | None = None,
        category: str | None = None,
        name: str | None = None,
        reasoning: str | None = None,
        confidence: str | None = None,
        references: list[str] | None = None,
        context: str | None = None,
    ) -> dict[str, Any]:
        """Record a learning (at least 20 characters). Category is inferred when not given.
        `context` is the task or situation it came from: searched with it."""
        draft = RememberDraft(
            text, source_repo, category, name, reasoning, confidence, references, context
        )
        async with call() as services:
            result = await services.learning.remember(draft)
        answer: dict[str, Any] = {"status": result.outcome.status, "message": result.message}
        if result.outcome.status == "reinforced":
            answer["observation_count"] = result.outcome.memory.observation_count
        return answer

    @server.tool()
    async def learn_strategy(
        task_description: str,
        total_attempts: int,
        quality_score: float,
        plan_steps: list[str] | None = None,
        plan_summary: str | None = None,
        attempt_history: list[dict[str, Any]] | None = None,
        files_changed: list[str] | None = None,
        model: str | None = None,
        source_repo: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Keep the plan of a first-attempt success (quality >= 7) as a reusable strategy.
        attempt_history items: {result: success|failure, step_index?, action?, error?}."""
        history = [from_mapping(Attempt, a, "attempt_history") for a in attempt_history or []]
        draft = StrategyAttempt(
            task_description, total_attempts, quality_score, plan_steps, plan_summary,
            history, files_changed, model, source_repo, task_id,
        )  # fmt: skip
        async with call() as services:
            result = await services.learning.learn_strategy(draft)
        return render_learned(result).model_dump(mode="json")

    @server.tool()
    async def get_strategy_hint(task: str, source_repo: str) -> dict[str, Any]:
        """A previously successful approach for a similar task in this repo, or an empty hint."""
        async with call() as services:
            hint = await services.learning.hint(services.search, task, source_repo)
        return render_hint(hint).model_dump(mode="json")

    @server.tool()
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
        """Compact delta context for a retry: what changed, the latest error, tokens saved.
        Files are {path, content}; diagnosis is {root_cause?, reason?, suggested_action?}."""
        draft = RetryDraft(
            task_description=task_description,
            plan_summary=plan_summary,
            current_files=[
                from_mapping(FileState, f, "current_files") for f in current_files or []
            ],
            previous_files=[
                from_mapping(FileState, f, "previous_files") for f in previous_files or []
            ],
            validation_output=validation_output,
            diagnosis=diagnosis,
            attempt_number=attempt_number,
            full_context_tokens=full_context_tokens,
        )
        async with call() as services:
            return await services.learning.retry_context(draft)

    @server.tool()
    async def start_session(
        source_repo: str | None = None, agent: str | None = None, task: str | None = None
    ) -> dict[str, Any]:
        """Start a work session: runs pruning, answers with the capture settings.
        Load snapshot next for the context to start from."""
        async with call() as services:
            started = await begin_session(
                services.runtime, services.sessions, SessionDraft(source_repo, agent, task)
            )
        return render_session_start(started.session, started.pruning, started.capture).model_dump(
            mode="json"
        )

    @server.tool()
    async def end_session(
        session_id: str,
        status: str,
        summary: str | None = None,
        key_changes: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """End a session as completed or failed, with a summary and up to 3 key changes
        ({file, action, description}) that the next snapshot will show."""
        try:
            session = UUID(session_id)
        except ValueError as exc:
            raise InvalidInputError("session_id must be a UUID", field="session_id") from exc
        changes = [from_mapping(KeyChange, c, "key_changes") for c in key_changes or []]
        async with call() as services:
            ended = await services.sessions.end(session, SessionEnd(status, summary, changes))
        return render_session(ended).model_dump(mode="json")

    @server.tool()
    async def snapshot(source_repo: str | None = None, max_chars: int | None = None) -> str:
        """The recency-graded context to load at the start of work, as markdown."""
        async with call() as services:
            built = await services.sessions.snapshot(source_repo, max_chars)
        return render_markdown(built)

    @server.tool()
    async def run_pruning(source_repo: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        """Archive what nobody uses (Ebbinghaus forgetting curve). Never deletes."""
        async with call() as services:
            report = await services.lifecycle.prune(source_repo, dry_run)
        return render_prune(report).model_dump(mode="json")

    @server.tool()
    async def get_access_stats(source_repo: str | None = None) -> dict[str, Any]:
        """Counts, health signals, the most used memories per type, and the next prune."""
        async with call() as services:
            return await services.stats.stats(source_repo)

    for tool in server._tool_manager.list_tools():
        _forbid_unknown_arguments(tool)
    return server
