"""OpenCode: its sessions are read from what `opencode export` writes (history/opencode.py,
`import-history --file`); it has no hooks here and nothing to install."""

from __future__ import annotations

from agent_memory_client.clients.base import Adapter

ADAPTER = Adapter(
    name="opencode",
    alias="opencode",
    label="OpenCode",
    reader="agent_memory_client.history.opencode",
    install=None,
    home=None,
    distiller=None,
)
