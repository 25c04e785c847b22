"""/standing: a repository's standing memories as a file holds them, for an agent that only
reads files (`agent-memory render` writes them into AGENTS.md and the like)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import ServicesDep
from app.api.examples import REPO
from app.api.responses import StandingOut
from app.api.rules import documented, line_rules
from app.domain.standing import DEFAULT_CHARS, MAX_CHARS, MIN_CHARS

router = APIRouter(tags=["sessions"])


@router.get(
    "/standing",
    response_model=StandingOut,
    summary="A repository's standing memories, rendered for a file agents read",
)
async def standing(
    services: ServicesDep,
    source_repo: Annotated[
        str,
        Query(
            description="The repository whose file it is.",
            examples=[REPO],
            json_schema_extra=line_rules("source_repo", required=True),
        ),
    ],
    max_chars: Annotated[
        int | None,
        Query(
            description=f"The rendered memories' budget (default {DEFAULT_CHARS}).",
            json_schema_extra=documented(between=(MIN_CHARS, MAX_CHARS)),
        ),
    ] = None,
) -> StandingOut:
    """Its pinned memories, decisions, conventions and anti-patterns (never a personal one,
    nor one held for review), the newest and the most read first, within the budget; every
    memory's text a quoted literal, as in the snapshot. The same memories give the same
    text."""
    done = await services.standing.standing(source_repo, max_chars)
    return StandingOut(
        source_repo=done.source_repo,
        markdown=done.markdown,
        memory_ids=done.memory_ids,
        left_out=done.left_out,
    )
