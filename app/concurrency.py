"""Per-tenant shares of a limited resource (requests in flight, pooled connections)."""

from __future__ import annotations

import asyncio
import time
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


class CostFairAdmission:
    """Who runs when the machine is full: at most `capacity` requests at once, each tenant
    at most `per_tenant`; when a slot frees, the waiting request of the tenant that has used
    least goes first. Use is what a tenant's requests cost: the seconds they held a slot
    (time in the model, the database and the event loop), decayed with a half-life, so a
    tenant sending expensive searches falls behind one sending cheap ones, and catches up
    once it stops. A request that waits past its deadline is refused (429, Retry-After):
    the tenant over its share waits or is refused, never another."""

    def __init__(self, capacity: int, per_tenant: int, half_life_s: float = 10.0) -> None:
        self.capacity = capacity
        self.per_tenant = per_tenant
        self._half_life_s = half_life_s
        self._tenants = TenantShares(per_tenant)
        self._running = 0
        self._waiting: list[tuple[str, int, asyncio.Future[None]]] = []
        self._order = 0
        self._use: dict[str, tuple[float, float]] = {}  # tenant -> (seconds, as of)

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot (past their tenant's own limit)."""
        return len(self._waiting)

    def use(self, tenant_id: str, now: float | None = None) -> float:
        seconds, stamp = self._use.get(tenant_id, (0.0, 0.0))
        now = time.monotonic() if now is None else now
        decayed: float = seconds * 0.5 ** ((now - stamp) / self._half_life_s)
        return decayed

    def charge(self, tenant_id: str, seconds: float, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self._use[tenant_id] = (self.use(tenant_id, now) + seconds, now)
        if len(self._use) > 10_000:  # forget the tenants that have used least
            for quiet in sorted(self._use, key=lambda t: self.use(t, now))[:1_000]:
                del self._use[quiet]

    async def _run_slot(self, tenant_id: str, timeout_s: float) -> bool:
        if self._running < self.capacity and not self._waiting:
            self._running += 1
            return True
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._order += 1
        entry = (tenant_id, self._order, turn)
        self._waiting.append(entry)
        try:
            await asyncio.wait_for(asyncio.shield(turn), timeout_s)
        except TimeoutError:
            if turn.done():  # admitted just as the deadline passed: the slot is ours
                return True
            self._waiting.remove(entry)
            return False
        except BaseException:
            if entry in self._waiting:
                self._waiting.remove(entry)
            elif turn.done():
                self._free_slot()
            raise
        return True

    def _free_slot(self) -> None:
        """A slot is free: the least-used tenant's oldest waiting request takes it."""
        if not self._waiting:
            self._running -= 1
            return
        now = time.monotonic()
        chosen = min(self._waiting, key=lambda e: (self.use(e[0], now), e[1]))
        self._waiting.remove(chosen)
        chosen[2].set_result(None)  # the slot passes on: _running is unchanged

    @asynccontextmanager
    async def slot(
        self, tenant_id: str, timeout_s: float, refusal: Exception
    ) -> AsyncIterator[None]:
        began = time.monotonic()
        if not await self._tenants.acquire(tenant_id, timeout_s):
            raise refusal
        try:
            left = max(0.0, timeout_s - (time.monotonic() - began))
            if not await self._run_slot(tenant_id, left):
                raise refusal
            held_from = time.monotonic()
            try:
                yield
            finally:
                self.charge(tenant_id, time.monotonic() - held_from)
                self._free_slot()
        finally:
            self._tenants.release(tenant_id)
