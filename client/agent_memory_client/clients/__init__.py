"""The clients, one adapter a client (clients/<client>.py; what an adapter holds:
base.Adapter). Everything that differs by client is read from here: the hooks (hooks.py),
the installer (install/), import-history's and import-files' folders (app/cli/history.py,
app/cli/files.py, rule_files/where.py), which reader a transcript file is for
(history/formats.py) and distill's CLIs (history/distill.py). A client with no hooks and
no installer (OpenCode: its exports are read) is an adapter with none
(docs/clients/README.md: adding a client)."""

from __future__ import annotations

from agent_memory_client.clients import claude_code, codex, copilot, cursor, gemini, opencode
from agent_memory_client.clients.base import Adapter, HookSpec

ADAPTERS: tuple[Adapter, ...] = (
    claude_code.ADAPTER, codex.ADAPTER, gemini.ADAPTER, cursor.ADAPTER, copilot.ADAPTER,
    opencode.ADAPTER,
)  # fmt: skip
# Each client with hooks, by every name it goes by (agent name and alias): `hook --client`
# and `install` take either.
CLIENTS: dict[str, Adapter] = {
    name: adapter for adapter in ADAPTERS if adapter.hooks for name in adapter.names
}
# `hook EVENT` without --client: the Claude Code plugin's hooks.
DEFAULT_CLIENT = claude_code.ADAPTER.name


def named(name: str) -> Adapter:
    """The client of that name or alias; KeyError for none."""
    found = next((a for a in ADAPTERS if name in a.names), None)
    if found is None:
        raise KeyError(name)
    return found


__all__ = ["ADAPTERS", "CLIENTS", "DEFAULT_CLIENT", "Adapter", "HookSpec", "named"]
