"""Cost-based fairness: when the service is full, a freed slot goes to the tenant whose
requests have cost least lately. Driven by events, not by the clock's speed."""

from __future__ import annotations

import asyncio

import pytest

from app.concurrency import CostFairAdmission
from app.domain.errors import RateLimitedError

REFUSED = RateLimitedError("busy", retry_after_s=1)


async def test_a_quiet_tenant_goes_before_a_flooding_one() -> None:
    admission = CostFairAdmission(capacity=1, per_tenant=8, half_life_s=3600)
    admission.charge("noisy", 30.0)  # expensive searches lately
    order: list[str] = []
    release = {name: asyncio.Event() for name in ("n0", "n1", "n2", "n3", "q")}
    started = asyncio.Event()

    async def request(tenant: str, name: str) -> None:
        async with admission.slot(tenant, 60, REFUSED):
            order.append(name)
            started.set()
            await release[name].wait()

    first = asyncio.create_task(request("noisy", "n0"))
    await started.wait()
    waiting = [asyncio.create_task(request("noisy", n)) for n in ("n1", "n2", "n3")]
    quiet = asyncio.create_task(request("quiet", "q"))
    while admission.waiting < 4:  # noqa: ASYNC110 - each request reaching its place in line
        await asyncio.sleep(0)
    # The flooding tenant queued first, but the quiet tenant has cost nothing: when the
    # running request ends, the quiet one runs next, after one request, not four.
    release["n0"].set()
    await first
    while len(order) < 2:  # noqa: ASYNC110 - the next request taking the freed slot
        await asyncio.sleep(0)
    assert order == ["n0", "q"]
    for event in release.values():
        event.set()
    await asyncio.gather(quiet, *waiting)
    assert sorted(order[2:]) == ["n1", "n2", "n3"]


async def test_use_decays_and_a_waiting_request_times_out_cleanly() -> None:
    admission = CostFairAdmission(capacity=1, per_tenant=8, half_life_s=10)
    admission.charge("t", 8.0, now=100.0)
    assert admission.use("t", now=110.0) == pytest.approx(4.0)
    assert admission.use("t", now=120.0) == pytest.approx(2.0)
    held = asyncio.Event()
    done = asyncio.Event()

    async def holder() -> None:
        async with admission.slot("a", 60, REFUSED):
            held.set()
            await done.wait()

    task = asyncio.create_task(holder())
    await held.wait()
    with pytest.raises(RateLimitedError):
        async with admission.slot("b", 0.01, REFUSED):
            pass
    done.set()
    await task
    async with admission.slot("b", 60, REFUSED):  # the slot came back
        pass
