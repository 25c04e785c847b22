"""A queue that serves tenants in turn, and each tenant's interactive work before its
batch work.

A plain FIFO lets one tenant's burst (or one batch import) sit in front of everybody
else's requests. Here each tenant has a line of its own; `get` takes the next job of the
tenant whose turn it is (its searches before its writes) and sends that tenant to the back
of the order. A request therefore waits for at most one job per other busy tenant, however
much those tenants have queued. Priority between classes holds only within a tenant: a
flood of one tenant's searches must not starve another tenant's writes (docs/benchmarks.md,
"A noisy neighbour").
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class _Line(Generic[T]):
    interactive: deque[T] = field(default_factory=deque)
    batch: deque[T] = field(default_factory=deque)

    def pop(self) -> T:
        return (self.interactive or self.batch).popleft()

    def __bool__(self) -> bool:
        return bool(self.interactive or self.batch)


class FairQueue(Generic[T]):
    def __init__(self) -> None:
        # Dicts keep insertion order: the order of turns.
        self._lines: dict[str, _Line[T]] = {}
        self._count = 0
        self._nonempty = asyncio.Event()

    def __len__(self) -> int:
        return self._count

    def put_nowait(self, item: T, *, tenant: str, interactive: bool) -> None:
        line = self._lines.setdefault(tenant, _Line())
        (line.interactive if interactive else line.batch).append(item)
        self._count += 1
        self._nonempty.set()

    def get_nowait(self) -> T:
        if not self._lines:
            raise asyncio.QueueEmpty
        tenant = next(iter(self._lines))
        line = self._lines.pop(tenant)
        item = line.pop()
        if line:
            self._lines[tenant] = line  # to the back of the order
        self._count -= 1
        if not self._count:
            self._nonempty.clear()
        return item

    async def get(self) -> T:
        while not self._count:
            await self._nonempty.wait()
        return self.get_nowait()
