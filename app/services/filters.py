"""What a filter names must exist: a memory type no memory has is refused, naming the types
there are, rather than answered with an empty page that looks like "no memories"."""

from __future__ import annotations

from app.db.unit_of_work import UnitOfWork
from app.domain.errors import InvalidInputError
from app.domain.filters import MemoryFilter
from app.domain.memory import KNOWN_MEMORY_TYPES
from app.repository.memories import MemoryRepository

# How many of the tenant's own types a refusal names (types are open: any snake_case name).
TYPES_NAMED = 40


async def require_known_types(uow: UnitOfWork, memory_filter: MemoryFilter) -> None:
    """Refuse a filter on a memory type that is neither a known type nor one of the
    tenant's. Known types cost nothing; any other one index skip over the tenant's types."""
    asked = [t for t in memory_filter.memory_types or () if t not in KNOWN_MEMORY_TYPES]
    if not asked:
        return
    stored = await MemoryRepository(uow).stored_types(TYPES_NAMED)
    unknown = [t for t in asked if t not in stored]
    if unknown:
        allowed = [*KNOWN_MEMORY_TYPES, *(t for t in stored if t not in KNOWN_MEMORY_TYPES)]
        raise InvalidInputError(
            f"memory_type {unknown[0]!r}: no memory has this type; the types are"
            f" {', '.join(allowed)}",
            field="memory_type",
        )
