"""The layers as docs/architecture.md draws them: doors → services → repository → db, the
domain beneath all of them importing nothing of the app but itself. An import that runs the
wrong way fails here, with the file and the import."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
DOORS = ("app.api", "app.mcp", "app.console", "app.cli")
# What each room may not import (module prefixes).
FORBIDDEN = {
    "app.domain": ("app.api", "app.mcp", "app.console", "app.cli", "app.services",
                   "app.repository", "app.db", "app.runtime", "app.startup", "app.main",
                   "app.config", "app.embeddings"),
    "app.repository": (*DOORS, "app.services", "app.runtime", "app.startup", "app.main"),
    "app.services": (*DOORS, "app.startup", "app.main"),
    "app.runtime": (*DOORS, "app.services", "app.repository", "app.startup", "app.main"),
    "app.db": (*DOORS, "app.services", "app.repository", "app.runtime", "app.main"),
    "app.api": ("app.repository", "app.db", "app.console", "app.cli", "app.main"),
    "app.mcp": ("app.repository", "app.db", "app.api", "app.console", "app.cli", "app.main"),
    "app.console": ("app.repository", "app.db", "app.api", "app.mcp", "app.cli", "app.main"),
    # The operator's door: it may start the database and migrate it (app.db), and reaches
    # the data through the services, as every door does.
    "app.cli": ("app.repository", "app.api", "app.console"),
}  # fmt: skip


def imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return found


def test_no_import_runs_the_wrong_way() -> None:
    wrong = []
    for path in sorted(APP.rglob("*.py")):
        module = ".".join(path.relative_to(APP.parent).with_suffix("").parts)
        for room, banned in FORBIDDEN.items():
            if module == room or module.startswith(room + "."):
                wrong += [
                    f"{path.relative_to(APP.parent)} imports {name}"
                    for name in imports(path)
                    if any(name == b or name.startswith(b + ".") for b in banned)
                ]
    assert not wrong, "\n".join(wrong)


def test_the_client_half_imports_nothing_of_the_server() -> None:
    """agent_memory_client runs beside the agent, apart from the server: the server may
    import it (its protocol's names), never the reverse."""
    client = APP.parent / "client" / "agent_memory_client"
    wrong = [
        f"{path.relative_to(APP.parent)} imports {name}"
        for path in sorted(client.rglob("*.py"))
        for name in imports(path)
        if name == "app" or name.startswith("app.")
    ]
    assert not wrong, "\n".join(wrong)
