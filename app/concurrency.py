"""Per-tenant shares of a limited resource (requests in flight, pooled connections)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass


@dataclass(slots=True)
class _Tenant:
    slots: asyncio.Semaphore
    waiting: int = 0  # for one of its own slots
    admitted: int = 0  # holding a slot and past the gate
    gated: int = 0  # holding a slot, waiting at the gate
    resume_at: float = 0.0  # while it yields: no admission before this time
    last_seen: float = -math.inf  # when a request of it was last admitted or done


class TenantShares:
    """At most `per_tenant` holders per tenant at once: a tenant's further requests wait
    for one of its own slots (not for another tenant's), up to a deadline.

    With `backlog_duty` (0 < duty <= 1), a backlogged tenant, one with more requests than
    its limit lets run, yields to the tenants that are not while they are being served: it
    runs one request at a time, and after each waits until that request's time is
    `backlog_duty` of the time since it began. Why: on a small machine one tenant within
    its limit can use most of it, and a flood beside it, even one request at a time,
    multiplies its tail (docs/operations.md). A tenant alone never yields, nor do tenants
    that are all backlogged."""

    # A tenant counts as being served this long after its last request: a client's next
    # request spends a while in parsing and authentication before it asks for a slot.
    SERVED_WINDOW_S = 1.0
    # The longest a yielding tenant idles after one request: a long one (an import) does
    # not lock its tenant out for three times its length.
    MAX_PAUSE_S = 2.0

    def __init__(
        self,
        per_tenant: int,
        backlog_duty: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 <= backlog_duty <= 1:
            raise ValueError("backlog_duty is a fraction: 0 (off) to 1")
        self.per_tenant = per_tenant
        self.backlog_duty = backlog_duty
        self._clock = clock
        self._tenants: dict[str, _Tenant] = {}
        self._changed = asyncio.Event()
        self._swept_at = -math.inf

    def admitted(self, tenant_id: str) -> int:
        tenant = self._tenants.get(tenant_id)
        return tenant.admitted if tenant else 0

    def queued(self, tenant_id: str) -> int:
        """The tenant's requests waiting for a slot of its own, or at the gate."""
        tenant = self._tenants.get(tenant_id)
        return tenant.waiting + tenant.gated if tenant else 0

    async def acquire(self, tenant_id: str, timeout_s: float) -> bool:
        """True once a slot is held; False when none freed up in time."""
        tenant = self._tenants.get(tenant_id)
        if tenant is None:
            tenant = self._tenants[tenant_id] = _Tenant(asyncio.Semaphore(self.per_tenant))
        deadline = self._clock() + timeout_s
        tenant.waiting += 1
        self._notify()
        got_slot = False
        try:
            await asyncio.wait_for(tenant.slots.acquire(), timeout_s)
            got_slot = True
        except TimeoutError:
            return False
        finally:
            tenant.waiting -= 1
            self._notify()
            if not got_slot:
                self._forget(tenant_id)
        tenant.gated += 1
        admitted = False
        try:
            admitted = await self._through_gate(tenant_id, deadline)
        finally:
            tenant.gated -= 1
            if admitted:
                tenant.admitted += 1
                tenant.last_seen = self._clock()
            else:
                tenant.slots.release()
                self._forget(tenant_id)
            self._notify()
        return admitted

    async def _through_gate(self, tenant_id: str, deadline: float) -> bool:
        """Waits while the tenant yields (see the class); False past the deadline."""
        tenant = self._tenants[tenant_id]
        while not self._gate_open(tenant_id):
            now = self._clock()
            if now >= deadline:
                return False
            wait = deadline - now
            if not tenant.admitted and tenant.resume_at > now:
                wait = min(wait, tenant.resume_at - now)
            with suppress(TimeoutError):  # the time it waited for, or the deadline
                await asyncio.wait_for(self._changed.wait(), wait)
        return True

    def release(self, tenant_id: str, held_s: float = 0.0) -> None:
        tenant = self._tenants[tenant_id]
        tenant.admitted -= 1
        tenant.last_seen = self._clock()
        if self._yields(tenant_id):
            # Idle long enough that this request's time is `backlog_duty` of the whole.
            pause = min(held_s * (1 / self.backlog_duty - 1), self.MAX_PAUSE_S)
            tenant.resume_at = max(tenant.resume_at, self._clock() + pause)
        tenant.slots.release()
        self._notify()
        self._forget(tenant_id)

    @asynccontextmanager
    async def slot(
        self, tenant_id: str, timeout_s: float, refusal: Exception
    ) -> AsyncIterator[None]:
        if not await self.acquire(tenant_id, timeout_s):
            raise refusal
        began = self._clock()
        try:
            yield
        finally:
            self.release(tenant_id, self._clock() - began)

    def _backlogged(self, tenant: _Tenant) -> bool:
        """It has more requests than its limit lets run at once."""
        return tenant.admitted + tenant.gated + tenant.waiting > self.per_tenant

    def _yields(self, tenant_id: str) -> bool:
        """Backlogged, while another tenant that is not is being served (a request in
        flight, or one within SERVED_WINDOW_S)."""
        if not self.backlog_duty or not self._backlogged(self._tenants[tenant_id]):
            return False
        now = self._clock()
        return any(
            (t.admitted or now - t.last_seen < self.SERVED_WINDOW_S) and not self._backlogged(t)
            for name, t in self._tenants.items()
            if name != tenant_id
        )

    def _gate_open(self, tenant_id: str) -> bool:
        tenant = self._tenants[tenant_id]
        if not self._yields(tenant_id):
            return True
        return not tenant.admitted and self._clock() >= tenant.resume_at

    def _notify(self) -> None:
        """Wakes the requests at the gate to look again (none wait there without a duty)."""
        if self.backlog_duty:
            self._changed.set()
            self._changed = asyncio.Event()

    def _forget(self, tenant_id: str) -> None:
        """Drops an idle tenant. With a duty, idle tenants still count as served for
        SERVED_WINDOW_S, so they are swept, all at once, at most once a window."""
        tenant = self._tenants[tenant_id]
        if tenant.waiting or tenant.admitted or tenant.gated:
            return
        if not self.backlog_duty:
            del self._tenants[tenant_id]
            return
        now = self._clock()
        if now - self._swept_at < self.SERVED_WINDOW_S:
            return
        self._swept_at = now
        for name in [
            name
            for name, t in self._tenants.items()
            if not (t.waiting or t.admitted or t.gated)
            and now - t.last_seen >= self.SERVED_WINDOW_S
        ]:
            del self._tenants[name]
