"""Admission: each tenant's own limit, and a tenant with more requests yielding to one with
fewer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from app.concurrency import TenantShares

FOREVER = 3600.0  # a deadline no test reaches: waits end on events


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def settle() -> None:
    """Let every task that can run, run: admission wakes waiters through the loop."""
    for _ in range(20):
        await asyncio.sleep(0)


_flooding: list[asyncio.Task[bool]] = []


@pytest.fixture(autouse=True)
def _cancel_floods() -> Iterator[None]:
    """A test leaves its flood's waiting requests behind: they are cancelled after it."""
    yield
    _flooding.clear()


async def quiet_served(per_tenant: int, backlog_duty: float) -> tuple[Clock, TenantShares]:
    """Shares on a fake clock, with a tenant within its limit ("quiet") being served."""
    clock = Clock()
    shares = TenantShares(per_tenant, backlog_duty, clock)
    assert await shares.acquire("quiet", FOREVER)
    return clock, shares


def flood(shares: TenantShares, tenant: str, n: int) -> list[asyncio.Task[bool]]:
    """`n` requests of `tenant`, each waiting for its slot."""
    tasks = [asyncio.create_task(shares.acquire(tenant, FOREVER)) for _ in range(n)]
    _flooding.extend(tasks)
    return tasks


async def test_a_tenant_waits_for_its_own_slots_not_another_tenants() -> None:
    shares = TenantShares(per_tenant=2)
    assert await shares.acquire("a", FOREVER) and await shares.acquire("a", FOREVER)
    third = asyncio.create_task(shares.acquire("a", FOREVER))
    await settle()
    assert not third.done()
    assert await shares.acquire("b", FOREVER)  # b is not held up by a's queue
    shares.release("a")
    assert await third


async def test_a_request_that_waits_past_its_deadline_is_refused_and_leaves_no_trace() -> None:
    shares = TenantShares(per_tenant=1)
    assert await shares.acquire("a", FOREVER)
    assert not await shares.acquire("a", 0.01)
    shares.release("a")
    assert shares.admitted("a") == 0 and not shares._tenants


async def test_a_flooding_tenant_runs_one_request_at_a_time_while_another_is_served() -> None:
    clock, shares = await quiet_served(4, 1.0)
    flood(shares, "noisy", 16)
    await settle()
    assert shares.admitted("noisy") == 1
    # The quiet tenant is not held back by the flood's queue.
    assert await shares.acquire("quiet", FOREVER)
    shares.release("noisy")
    await settle()
    assert shares.admitted("noisy") == 1
    # Between a client's requests the quiet tenant still counts as served ...
    shares.release("quiet")
    shares.release("quiet")
    await settle()
    assert shares.admitted("noisy") == 1
    # ... and once it has not been for a while, the flood gets its whole share back.
    clock.now = TenantShares.SERVED_WINDOW_S
    shares.release("noisy")
    await settle()
    assert shares.admitted("noisy") == 4


async def test_a_yielding_tenant_idles_until_its_request_was_its_duty_of_the_time() -> None:
    clock, shares = await quiet_served(4, 0.25)
    flood(shares, "noisy", 8)
    await settle()
    assert shares.admitted("noisy") == 1
    clock.now = 0.5  # the admitted request held its slot for 0.5 s ...
    shares.release("noisy", held_s=0.5)
    await settle()
    assert shares.admitted("noisy") == 0  # ... so the next waits 1.5 s more: 1 s in 4
    clock.now = 1.9
    assert await shares.acquire("quiet", FOREVER)  # any change wakes the gate to re-check
    await settle()
    assert shares.admitted("noisy") == 0
    clock.now = 2.0
    assert await shares.acquire("quiet", FOREVER)
    await settle()
    assert shares.admitted("noisy") == 1


async def test_tenants_with_as_many_requests_as_each_other_share_as_before() -> None:
    shares = TenantShares(per_tenant=2, backlog_duty=0.25)
    flood(shares, "a", 5)
    flood(shares, "b", 5)
    await settle()
    assert shares.admitted("a") == 2 and shares.admitted("b") == 2


async def test_two_clients_within_their_limit_idle_beside_a_tenant_being_served() -> None:
    clock, shares = await quiet_served(4, 0.25)
    flood(shares, "pair", 2)  # within its limit of 4, but more than the quiet tenant's one
    await settle()
    assert shares.admitted("pair") == 2  # within its limit, both run
    clock.now = 0.1
    # Each counts as yielding as it ends, the other still in: a client sends its next
    # request only after the answer, so a pair of clients never has more than two in.
    shares.release("pair", held_s=0.1)
    shares.release("pair", held_s=0.1)
    flood(shares, "pair", 2)
    await settle()
    assert shares.admitted("pair") == 0
    clock.now = 0.4  # 0.1 s busy in 0.4
    shares.release("quiet")  # any change: the gate looks again
    await settle()
    assert shares.admitted("pair") == 2


async def test_two_tenants_of_the_same_load_do_not_yield_to_each_other_by_turns() -> None:
    clock = Clock()
    shares = TenantShares(4, 0.25, clock)
    flood(shares, "a", 2)
    flood(shares, "b", 2)
    await settle()
    clock.now = 5.0  # two requests each, for long enough to be their average
    # Between two of b's requests it has one in, but it has had two on average: a, with
    # two, does not count as twice its load, and goes on without a pause.
    shares.release("b", held_s=5.0)
    shares.release("a", held_s=5.0)
    flood(shares, "a", 1)
    await settle()
    assert shares.admitted("a") == 2


async def test_a_long_request_holds_back_none_of_its_tenants_others() -> None:
    clock, shares = await quiet_served(4, 0.25)
    assert await shares.acquire("importer", FOREVER)  # an import, running throughout
    for _ in range(3):
        flood(shares, "importer", 1)
        await settle()
        assert shares.admitted("importer") == 2
        clock.now += 0.1
        shares.release("importer", held_s=0.1)  # then idles 0.3 s before the next
        clock.now += 0.3


async def test_a_tenant_with_one_request_at_a_time_never_yields() -> None:
    clock, shares = await quiet_served(4, 0.25)
    for _ in range(3):
        flood(shares, "single", 1)
        await settle()
        assert shares.admitted("single") == 1  # at once: no pause after the one before
        clock.now += 0.5
        shares.release("single", held_s=0.5)


async def test_the_heavier_of_two_tenants_past_their_limits_yields() -> None:
    shares = TenantShares(per_tenant=2, backlog_duty=1.0)
    flood(shares, "light", 3)
    flood(shares, "heavy", 6)
    await settle()
    assert shares.admitted("light") == 2 and shares.admitted("heavy") == 1


async def test_a_yielding_request_past_its_deadline_frees_its_slot() -> None:
    clock, shares = await quiet_served(2, 0.5)
    assert await shares.acquire("noisy", FOREVER)
    gated = asyncio.create_task(shares.acquire("noisy", 5.0))
    later = asyncio.create_task(shares.acquire("noisy", FOREVER))
    await settle()
    assert not gated.done()  # it holds a slot, but one request of its tenant is running
    clock.now = 10.0  # past its deadline (5.0)
    assert await shares.acquire("other", FOREVER)  # any change: the gate looks again
    assert await gated is False
    # The slot it held went to the next in line, which starts when the running one ends.
    shares.release("noisy")
    assert await later


async def test_a_long_request_pauses_its_tenant_for_at_most_the_cap() -> None:
    clock, shares = await quiet_served(1, 0.25)
    assert await shares.acquire("importer", FOREVER)
    flood(shares, "importer", 2)
    await settle()
    clock.now = 60.0
    assert await shares.acquire("other", FOREVER)  # keeps someone within its limit served
    shares.release("importer", held_s=60.0)  # three times that would be three minutes
    await settle()
    assert shares.admitted("importer") == 0
    clock.now = 60.0 + TenantShares.MAX_PAUSE_S
    shares.release("other")  # any change: the gate looks again
    await settle()
    assert shares.admitted("importer") == 1


def test_a_duty_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="fraction"):
        TenantShares(per_tenant=1, backlog_duty=1.5)
