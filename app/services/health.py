"""Readiness: the database answers, its schema is at the migration head, and after a start
it has read back what its buffers held (or the wait for that has run out)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.db.migrations import current_revision
from app.db.unit_of_work import CONNECTION_ERRORS

if TYPE_CHECKING:
    from app.runtime import Runtime


@dataclass(frozen=True, slots=True)
class Readiness:
    database: str  # "ok" or "unreachable"
    schema: str | None  # the revision found (None when unreachable)
    expected: str
    warming: bool = False  # the database is still reading its buffers back after a start

    @property
    def ready(self) -> bool:
        return self.database == "ok" and self.schema == self.expected and not self.warming


async def readiness(runtime: Runtime) -> Readiness:
    try:
        async with runtime.database.pool.acquire(timeout=2) as conn:
            revision = await current_revision(conn)
    except CONNECTION_ERRORS:
        return Readiness("unreachable", None, runtime.schema_head)
    return Readiness("ok", revision, runtime.schema_head, warming=not runtime.warmth.warm)


def is_connection_error(exc: BaseException) -> bool:
    """Whether an error means "the database is not there right now" (a 503 to retry)."""
    return isinstance(exc, CONNECTION_ERRORS)
