"""A repository's standing memories as a file holds them (`agent-memory render`;
app/domain/standing.py): read, never changed."""

from __future__ import annotations

from app.db.unit_of_work import UnitOfWork
from app.domain.errors import InvalidInputError
from app.domain.inputs.memories import source_repo_filter
from app.domain.principal import Principal
from app.domain.standing import (
    CANDIDATES,
    STANDING_CATEGORIES,
    STANDING_TYPES,
    Standing,
    render,
    standing_budget,
)
from app.repository.standing import StandingRepository


class StandingService:
    def __init__(self, uow: UnitOfWork, actor: Principal) -> None:
        self._repo = StandingRepository(uow)
        self._actor = actor

    async def standing(self, source_repo: str | None, max_chars: int | None) -> Standing:
        self._actor.require("read")
        repo = source_repo_filter(source_repo)
        if repo is None:
            raise InvalidInputError(
                "source_repo must name the repository whose file it is", field="source_repo"
            )
        budget = standing_budget(max_chars)
        rows = await self._repo.candidates(repo, STANDING_TYPES, STANDING_CATEGORIES, CANDIDATES)
        return render(repo, rows, budget)
