"""A one-line progress meter for long CLI commands, drawn on a terminal only (a pipe or a
log file gets the final summary, not a stream of carriage returns)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

REDRAW_S = 0.2


class Progress:
    def __init__(self, label: str, total: int | None, unit: str, stream: TextIO = sys.stderr):
        self.label = label
        self.total = total
        self.unit = unit
        self.done = 0
        self._stream = stream
        self._shown = stream.isatty()
        self._drawn_at = 0.0

    def advance(self, amount: int = 1) -> None:
        self.done += amount
        now = time.monotonic()
        if self._shown and now - self._drawn_at >= REDRAW_S:
            self._drawn_at = now
            self._draw()

    def _draw(self) -> None:
        if self.total:
            share = min(self.done / self.total, 1.0)
            bar = "#" * int(share * 30)
            text = (
                f"{self.label} [{bar:<30}] {share:4.0%}  {self.done:,}/{self.total:,} {self.unit}"
            )
        else:
            text = f"{self.label} {self.done:,} {self.unit}"
        self._stream.write(f"\r{text}")
        self._stream.flush()

    def close(self) -> None:
        if self._shown:
            self._draw()
            self._stream.write("\n")
            self._stream.flush()
