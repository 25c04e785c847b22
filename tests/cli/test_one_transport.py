"""The server's CLI reaches a running server one way: app/client.py's MemoryClient, whose
`_exchange()` alone sends a request (its timeout, its key, its errors written once). A
command that opened an HTTP client of its own, or a second path through httpx, fails here
with the file and the line."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
# What sends HTTP requests: a command importing one talks to a server in its own way.
TRANSPORTS = ("httpx", "urllib.request", "http.client", "socket", "requests", "aiohttp")
# The client half's own transport, for the hooks and the bridge (which the CLI only starts).
CLIENT_HALF_TRANSPORT = "agent_memory_client.connection"


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def test_no_command_sends_a_request_of_its_own() -> None:
    wrong = [
        f"{path.relative_to(APP.parent)}:{line} imports {name}"
        for path in sorted((APP / "cli").glob("*.py"))
        for line, name in imported(ast.parse(path.read_text()))
        if any(name == t or name.startswith(t + ".") for t in (*TRANSPORTS, CLIENT_HALF_TRANSPORT))
    ]
    assert not wrong, "\n".join(wrong)


def test_the_typed_client_sends_every_request_through_one_method() -> None:
    """Only `_exchange()` calls the HTTP client's methods (`__init__` makes it, `close`
    closes it); every operation calls `send()` or `_exchange()`."""
    tree = ast.parse((APP / "client.py").read_text())
    client = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MemoryClient")
    wrong = []
    for method in client.body:
        if not isinstance(method, ast.FunctionDef):
            continue
        for node in ast.walk(method):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "_http"
                and method.name not in ("_exchange", "close")
            ):
                wrong.append(f"app/client.py:{node.lineno} {method.name} calls _http.{node.attr}")
    assert not wrong, "\n".join(wrong)
    assert [line for line, name in imported(tree) if name == "httpx"], "the transport moved"
