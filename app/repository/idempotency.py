"""Idempotency-Key records, one per tenant and key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.db.unit_of_work import UnitOfWork
from app.repository.sql import named


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    request_hash: str
    status: int | None
    response: bytes | None
    created_at: datetime
    completed_at: datetime | None


class IdempotencyRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def reserve(
        self, key: str, request_hash: str, stale_after_s: float, *, take_over: bool = False
    ) -> IdempotencyRecord | None:
        """Claim the key (None: claimed, go ahead), or the existing record. An unfinished
        claim for the same request is taken over when it is older than `stale_after_s`
        (its process died) or when `take_over` says its owner gave up on it. The time is
        the proposed row's default, now(), and the age is told by immutable arithmetic:
        Citus takes no stable function in ON CONFLICT (timestamptz - interval is one)."""
        conn = await self._uow.connection()
        row = await conn.fetchrow(
            *named(
                """
                INSERT INTO idempotency_keys AS i (tenant_id, key, request_hash)
                VALUES (:tenant_id, :key, :request_hash)
                ON CONFLICT (tenant_id, key) DO UPDATE
                    SET created_at = EXCLUDED.created_at, request_hash = EXCLUDED.request_hash
                    WHERE i.completed_at IS NULL
                      AND i.request_hash = EXCLUDED.request_hash
                      AND (:take_over
                           OR extract(epoch FROM EXCLUDED.created_at - i.created_at)
                              > :stale_after_s)
                RETURNING true AS claimed
                """,
                {
                    "tenant_id": self._uow.tenant_id,
                    "key": key,
                    "request_hash": request_hash,
                    "stale_after_s": stale_after_s,
                    "take_over": take_over,
                },
            )
        )
        if row is not None:
            return None
        existing = await conn.fetchrow(
            *named(
                "SELECT request_hash, status, response, created_at, completed_at"
                " FROM idempotency_keys WHERE tenant_id = :tenant_id AND key = :key",
                {"tenant_id": self._uow.tenant_id, "key": key},
            )
        )
        return IdempotencyRecord(**dict(existing))

    async def complete(self, key: str, status: int, response: bytes) -> None:
        conn = await self._uow.connection()
        await conn.execute(
            *named(
                "UPDATE idempotency_keys"
                " SET status = :status, response = :response, completed_at = now()"
                " WHERE tenant_id = :tenant_id AND key = :key",
                {
                    "tenant_id": self._uow.tenant_id,
                    "key": key,
                    "status": status,
                    "response": response,
                },
            )
        )

    async def release(self, key: str) -> None:
        conn = await self._uow.connection()
        await conn.execute(
            *named(
                "DELETE FROM idempotency_keys"
                " WHERE tenant_id = :tenant_id AND key = :key AND completed_at IS NULL",
                {"tenant_id": self._uow.tenant_id, "key": key},
            )
        )
