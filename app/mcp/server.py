"""MCP tools: thin adapters from tool arguments to the service layer (no logic of their own).

Each tool call is one unit of work, committed when the tool returns, like a REST request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from app import __version__
from app.api.lifecycle import render_prune
from app.api.memories import to_new_memory
from app.api.schemas import (
    CaptureSettings,
    MemoryIn,
    MemoryOut,
    SearchIn,
    SessionEndIn,
    SessionStartOut,
)
from app.api.search import render_search, search_request
from app.api.sessions import render_session
from app.db.session import UnitOfWork, unit_of_work
from app.domain.diffs import retry_context as build_retry_context
from app.domain.errors import AppError
from app.domain.snapshot import render_markdown
from app.runtime import Runtime
from app.services.auth import Principal
from app.services.learning import LearningService, StrategyAttempt, strategy_hint
from app.services.lifecycle import LifecycleService
from app.services.memories import MemoryService
from app.services.search import SearchService
from app.services.sessions import SessionService, prune_quietly
from app.services.stats import StatsService

# Who the current tool call is for: set by the /mcp route from the request's key, or by
# `agent-memory mcp` for the process.
current_principal: ContextVar[Principal | None] = ContextVar("mcp_principal", default=None)

INSTRUCTIONS = (
    "agent-memory: long-term memory for coding agents. Search before planning "
    "(search_memories, get_strategy_hint); record what you learn (remember, store_memory); "
    "after a first-attempt success call learn_strategy; on a retry call retry_context."
)


def _memory(memory: Any) -> dict[str, Any]:
    return MemoryOut.of(memory).model_dump(mode="json")


def build_mcp_server(get_runtime: Callable[[], Runtime]) -> MCPServer:
    server: MCPServer = MCPServer(
        name="agent-memory", version=__version__, instructions=INSTRUCTIONS
    )

    def caller(capability: str) -> Principal:
        principal = current_principal.get()
        if principal is None:
            raise ToolError("not authenticated")
        try:
            principal.require(capability)
        except AppError as exc:
            raise ToolError(exc.detail) from exc
        return principal

    @asynccontextmanager
    async def work(capability: str) -> AsyncIterator[tuple[Runtime, UnitOfWork]]:
        """One tool call, one transaction, in the caller's tenant; the service's typed errors
        become tool errors with the same wording a REST client gets."""
        principal = caller(capability)
        runtime = get_runtime()
        try:
            async with unit_of_work(runtime.database, principal.tenant_id, principal.key_id) as uow:
                yield runtime, uow
        except AppError as exc:
            raise ToolError(exc.detail) from exc
        except ValidationError as exc:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
            raise ToolError(f"invalid input: {fields}") from exc

    def learning(runtime: Runtime, uow: UnitOfWork) -> LearningService:
        memories = MemoryService(uow, runtime.embedder, runtime.telemetry)
        return LearningService(memories, runtime.settings, runtime.limits)

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
        body = MemoryIn.model_validate(
            {
                "content": content,
                "memory_type": memory_type,
                "category": category,
                "tags": tags or [],
                "source_repo": source_repo,
                "task_id": task_id,
                "trust_level": trust_level,
                "confidence": confidence,
                "pinned": pinned,
                "source": source,
                "name": name,
                "metadata": metadata or {},
                "context": context,
            }
        )
        async with work("write") as (runtime, uow):
            current_principal.get().require_trust(body.trust_level)  # type: ignore[union-attr]
            new = to_new_memory(body, runtime.limits)
            outcome = await MemoryService(uow, runtime.embedder, runtime.telemetry).store(new)
        label = f"{new.name or new.content[:60]} ({new.category or new.memory_type})"
        message = (
            f"Stored: {label}"
            if outcome.status == "stored"
            else f"Reinforced: {label} — observation count incremented"
        )
        return {"status": outcome.status, "message": message, "memory": _memory(outcome.memory)}

    @server.tool()
    async def search_memories(
        query: str,
        source_repo: str | None = None,
        memory_type: list[str] | None = None,
        tags: list[str] | None = None,
        limit: int = 10,
        alpha: float | None = None,
        min_trust: str | None = None,
    ) -> dict[str, Any]:
        """Hybrid (keyword + semantic) search; results in rank order with their scores."""
        body = SearchIn.model_validate(
            {
                "q": query,
                "source_repo": source_repo,
                "memory_type": memory_type,
                "tags": tags,
                "limit": limit,
                "alpha": alpha,
                "min_trust": min_trust,
            }
        )
        async with work("read") as (runtime, uow):
            service = SearchService(uow, runtime.embedder, runtime.settings, runtime.telemetry)
            response = await service.search(search_request(body, runtime.settings))
        return render_search(response).model_dump(mode="json")

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
        async with work("write") as (runtime, uow):
            result = await learning(runtime, uow).remember(
                text,
                source_repo=source_repo,
                category=category,
                name=name,
                reasoning=reasoning,
                confidence=confidence,
                references=references or [],
                context=context,
            )
        answer: dict[str, Any] = {
            "status": result.outcome.status,
            "message": LearningService.remember_message(result),
        }
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
        """Keep the plan of a first-attempt success (quality >= 7) as a reusable strategy."""
        async with work("write") as (runtime, uow):
            result = await learning(runtime, uow).learn_strategy(
                StrategyAttempt(
                    task_description,
                    plan_steps,
                    plan_summary,
                    attempt_history or [],
                    total_attempts,
                    quality_score,
                    files_changed or [],
                    model,
                    source_repo,
                    task_id,
                )
            )
        return {
            "status": result.status,
            "reason": result.reason,
            "memory": _memory(result.memory) if result.memory else None,
        }

    @server.tool()
    async def get_strategy_hint(task: str, source_repo: str) -> dict[str, Any]:
        """A previously successful approach for a similar task in this repo, or an empty hint."""
        principal = caller("read")
        hint = await strategy_hint(get_runtime(), principal.tenant_id, task, source_repo)
        return {
            "hint": hint.hint,
            "similarity": hint.similarity,
            "strategy": _memory(hint.strategy) if hint.strategy else None,
        }

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
        """Compact delta context for a retry: what changed, the latest error, tokens saved."""
        caller("write")
        return build_retry_context(
            task_description=task_description,
            plan_summary=plan_summary,
            current_files=current_files or [],
            previous_files=previous_files or [],
            validation_output=validation_output,
            diagnosis=diagnosis,
            attempt_number=attempt_number,
            full_context_tokens=full_context_tokens,
        )

    @server.tool()
    async def start_session(
        source_repo: str | None = None, agent: str | None = None, task: str | None = None
    ) -> dict[str, Any]:
        """Start a work session: runs pruning, answers with the capture settings.
        Load get_snapshot next for the context to start from."""
        principal = caller("write")
        report = await prune_quietly(get_runtime(), principal.tenant_id, source_repo)
        async with work("write") as (runtime, uow):
            service = SessionService(uow, runtime.settings)
            session = await service.start(source_repo, agent, task)
        return SessionStartOut(
            session_id=session.id,
            session=render_session(session),
            pruning=render_prune(report) if report else None,
            capture=CaptureSettings(**service.capture_settings()),
        ).model_dump(mode="json")

    @server.tool()
    async def end_session(
        session_id: str,
        status: str,
        summary: str | None = None,
        key_changes: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """End a session as completed or failed, with a summary and up to 3 key changes
        ({file, action, description}) that the next snapshot will show."""
        async with work("write") as (runtime, uow):
            body = SessionEndIn.model_validate(
                {"status": status, "summary": summary, "key_changes": key_changes or []}
            )
            changes = [c.model_dump(exclude_none=True) for c in body.key_changes]
            ended = await SessionService(uow, runtime.settings).end(
                UUID(session_id), body.status, body.summary, changes
            )
        return render_session(ended).model_dump(mode="json")

    @server.tool()
    async def snapshot(source_repo: str | None = None, max_chars: int | None = None) -> str:
        """The recency-graded context to load at the start of work, as markdown."""
        async with work("read") as (runtime, uow):
            built = await SessionService(uow, runtime.settings).snapshot(source_repo, max_chars)
        return render_markdown(built)

    @server.tool()
    async def run_pruning(source_repo: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        """Archive what nobody uses (Ebbinghaus forgetting curve). Never deletes."""
        async with work("admin") as (runtime, uow):
            report = await LifecycleService(uow, runtime.settings, runtime.telemetry).prune(
                source_repo, dry_run
            )
        return render_prune(report).model_dump(mode="json")

    @server.tool()
    async def get_access_stats(source_repo: str | None = None) -> dict[str, Any]:
        """Counts, health signals, the most used memories per type, and the next prune."""
        async with work("observe") as (runtime, uow):
            return await StatsService(uow, runtime.settings).stats(source_repo)

    return server
