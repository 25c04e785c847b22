"""Per-tenant shares of a limited resource (requests in flight, pooled connections)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class TenantShares:
    """At most `per_tenant` holders per tenant at once: a tenant's further requests wait
    for one of its own slots (not for another tenant's), up to a deadline."""

    def __init__(self, per_tenant: int) -> None:
        self.per_tenant = per_tenant
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._users: dict[str, int] = {}  # holders and waiters, to drop idle semaphores

    async def acquire(self, tenant_id: str, timeout_s: float) -> bool:
        """True once a slot is held; False when none freed up in time."""
        slots = self._slots.setdefault(tenant_id, asyncio.Semaphore(self.per_tenant))
        self._users[tenant_id] = self._users.get(tenant_id, 0) + 1
        try:
            await asyncio.wait_for(slots.acquire(), timeout_s)
        except TimeoutError:
            self._forget(tenant_id)
            return False
        except BaseException:
            self._forget(tenant_id)
            raise
        return True

    def release(self, tenant_id: str) -> None:
        self._slots[tenant_id].release()
        self._forget(tenant_id)

    @asynccontextmanager
    async def slot(
        self, tenant_id: str, timeout_s: float, refusal: Exception
    ) -> AsyncIterator[None]:
        if not await self.acquire(tenant_id, timeout_s):
            raise refusal
        try:
            yield
        finally:
            self.release(tenant_id)

    def _forget(self, tenant_id: str) -> None:
        self._users[tenant_id] -= 1
        if not self._users[tenant_id]:
            del self._users[tenant_id], self._slots[tenant_id]
