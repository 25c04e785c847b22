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
    # Its requests in the service, averaged over about the last SERVED_WINDOW_S, as of
    # `averaged_at` (taken before every change of the counts above).
    average: float = 0.0
    averaged_at: float = -math.inf

    @property
    def requests(self) -> int:
        """Its requests in the service: running, at the gate, or waiting for a slot."""
        return self.admitted + self.gated + self.waiting


class TenantShares:
    """At most `per_tenant` holders per tenant at once: a tenant's further requests wait
    for one of its own slots (not for another tenant's), up to a deadline.

    With `backlog_duty` (0 < duty <= 1), a tenant *yields* to a lighter one: one being
    served while it has at least twice as many requests in the service (or one, between
    its requests), now or on average over the last second. After each of its requests it
    admits no other until that request's time is `backlog_duty` of the time since it
    began; with more requests than its limit, it also runs them one at a time. Why: on a
    small machine one tenant's two clients searching back to back take most of it and
    doubled the tail of a tenant beside them (docs/scale-out.md); a flood past its limit
    tripled it (docs/operations.md). The average keeps two tenants of about the same load
    from yielding to each other by turns, as their requests come and go. Requests already
    running go on: a long one (an import) holds back none of its tenant's others. A tenant
    alone never yields."""

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
        self._tally(tenant)
        tenant.waiting += 1
        self._notify()
        got_slot = False
        try:
            await asyncio.wait_for(tenant.slots.acquire(), timeout_s)
            got_slot = True
        except TimeoutError:
            return False
        finally:
            self._tally(tenant)
            tenant.waiting -= 1
            self._notify()
            if not got_slot:
                self._forget(tenant_id)
        tenant.gated += 1
        admitted = False
        try:
            admitted = await self._through_gate(tenant_id, deadline)
        finally:
            self._tally(tenant)
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
            if tenant.resume_at > now:
                wait = min(wait, tenant.resume_at - now)
            with suppress(TimeoutError):  # the time it waited for, or the deadline
                await asyncio.wait_for(self._changed.wait(), wait)
        return True

    def release(self, tenant_id: str, held_s: float = 0.0) -> None:
        tenant = self._tenants[tenant_id]
        # Whether it yielded, counting the request that ends: a client sends its next
        # request after this one's answer, so without it a tenant of two clients would
        # seem to have one.
        yielded = self._yields(tenant_id)
        self._tally(tenant)
        tenant.admitted -= 1
        tenant.last_seen = self._clock()
        if yielded:
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

    def _tally(self, tenant: _Tenant) -> None:
        """Brings its average up to now, before its count changes."""
        now = self._clock()
        kept = math.exp(-(now - tenant.averaged_at) / self.SERVED_WINDOW_S)
        tenant.average = tenant.average * kept + tenant.requests * (1 - kept)
        tenant.averaged_at = now

    def _load(self, tenant: _Tenant) -> float:
        """Its requests now, or on average, whichever is more."""
        self._tally(tenant)
        return max(tenant.requests, tenant.average)

    def _yields(self, tenant_id: str) -> bool:
        """At least twice the load of another tenant being served (see the class)."""
        if not self.backlog_duty:
            return False
        return self._served_beside(tenant_id, at_most=self._load(self._tenants[tenant_id]) / 2)

    def _served_beside(self, tenant_id: str, at_most: float) -> bool:
        """Another tenant of at most that load is being served: it has a request in flight,
        or had one within SERVED_WINDOW_S (between its requests its load counts as one)."""
        now = self._clock()
        return any(
            (t.admitted or now - t.last_seen < self.SERVED_WINDOW_S)
            and max(self._load(t), 1) <= at_most
            for name, t in self._tenants.items()
            if name != tenant_id
        )

    def _gate_open(self, tenant_id: str) -> bool:
        tenant = self._tenants[tenant_id]
        if tenant.resume_at > self._clock() and self._served_beside(tenant_id, at_most=math.inf):
            return False  # idling after a request it yielded with, while others are served
        # Past its limit as well: one request at a time.
        backlogged = tenant.requests > self.per_tenant
        return not (tenant.admitted and backlogged and self._yields(tenant_id))

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
