"""A queue that serves tenants in turn, and interactive work before batch work.

A plain FIFO lets one tenant's burst (or one batch import) sit in front of everybody
else's searches. Here each class (interactive, batch) keeps one line per tenant; `get`
takes from the first tenant with interactive work, else with batch work, and sends that
tenant to the back of its class's order: round robin within a class, strict priority
between classes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class FairQueue(Generic[T]):
    def __init__(self) -> None:
        # Index 0: interactive, 1: batch. Dicts keep insertion order: the round robin.
        self._classes: tuple[dict[str, deque[T]], dict[str, deque[T]]] = ({}, {})
        self._count = 0
        self._nonempty = asyncio.Event()

    def __len__(self) -> int:
        return self._count

    def put_nowait(self, item: T, *, tenant: str, interactive: bool) -> None:
        lines = self._classes[0 if interactive else 1]
        lines.setdefault(tenant, deque()).append(item)
        self._count += 1
        self._nonempty.set()

    def get_nowait(self) -> T:
        for lines in self._classes:
            if lines:
                tenant = next(iter(lines))
                line = lines.pop(tenant)
                item = line.popleft()
                if line:
                    lines[tenant] = line  # to the back of the order
                self._count -= 1
                if not self._count:
                    self._nonempty.clear()
                return item
        raise asyncio.QueueEmpty

    async def get(self) -> T:
        while not self._count:
            await self._nonempty.wait()
        return self.get_nowait()
