"""One adapter a client: it reads that client's hook input into the loop's events
(loop.py) and writes the loop's answer in that client's output shape, and declares the
hooks the installer writes. Nothing else: what memory does is the loop's."""

from __future__ import annotations

from agent_memory_client.clients import claude_code, codex, copilot, cursor, gemini
from agent_memory_client.clients.base import Adapter, HookSpec

CLIENTS: dict[str, Adapter] = {
    adapter.name: adapter for adapter in (claude_code.ADAPTER, codex.ADAPTER, gemini.ADAPTER,
                                          cursor.ADAPTER, copilot.ADAPTER)
}  # fmt: skip

__all__ = ["CLIENTS", "Adapter", "HookSpec"]
