"""The model queue: tenants take turns; within a tenant, searches go before writes."""

from __future__ import annotations

import asyncio

from app.embeddings.fair_queue import FairQueue


def drain(queue: FairQueue[str]) -> list[str]:
    order = []
    while len(queue):
        order.append(queue.get_nowait())
    return order


def test_a_flood_of_one_tenants_searches_does_not_starve_anothers_writes() -> None:
    queue: FairQueue[str] = FairQueue()
    for n in range(100):
        queue.put_nowait(f"noisy search {n}", tenant="noisy", interactive=True)
    queue.put_nowait("quiet store", tenant="quiet", interactive=False)
    assert drain(queue)[:2] == ["noisy search 0", "quiet store"]


def test_a_search_waits_for_one_part_of_a_batch_import_not_the_whole_import() -> None:
    queue: FairQueue[str] = FairQueue()
    for n in range(50):
        queue.put_nowait(f"import part {n}", tenant="a", interactive=False)
    queue.put_nowait("b search", tenant="b", interactive=True)
    queue.put_nowait("a search", tenant="a", interactive=True)
    # a's own search before its parts; b's search on the next turn, not after 50 parts.
    assert drain(queue)[:4] == ["a search", "b search", "import part 0", "import part 1"]


async def test_get_waits_for_work() -> None:
    queue: FairQueue[str] = FairQueue()
    waiting = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    assert not waiting.done()
    queue.put_nowait("job", tenant="t", interactive=False)
    assert await asyncio.wait_for(waiting, 1) == "job"
    assert len(queue) == 0
