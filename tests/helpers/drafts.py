"""Drafts as a client queues them (POST /drafts): a fix, a user's rule, and a fix with the
evidence the hooks keep."""

from __future__ import annotations

from typing import Any

FIX = {
    "kind": "fix",
    "text": "`python3 check.py` failed with: ModuleNotFoundError: No module named 'helper'. It"
    " passed after changing helper.py.",
    "files": ["helper.py"],
    "source_repo": "acme/api",
    "client": "codex",
    "client_session": "01a228c6-a8d4-79d3-b4f8-5fdbc031b307",
    "seen_at": "2026-10-02T14:03:11+00:00",
}
RULE = {
    **FIX,
    "kind": "instruction",
    "text": "Never edit the generated files; always use the make target instead.",
    "files": [],
    "client": "claude-code",
    "client_session": "66c3e9d3-5e2b-4520-8068-c586f826f0c7",
    "seen_at": "2026-10-05T09:00:00+00:00",
    "sources": ["https://example.com/setup"],
}
EVIDENCED: dict[str, Any] = {
    **FIX,
    "text": "`pytest -q` failed with: AssertionError: 3 != 4. It passed after changing calc.py.",
    "client_session": "s-evidence",
    # In no particular order: the queue gives them back in its own.
    "evidence": {
        "command": "pytest -q",
        "error": "tests/test_calc.py:12: AssertionError: assert 3 == 4\n  where 3 = add(1, 1)",
        "change": "calc.py: return a + b (was a + a)",
        "failed": "pytest -q 2>&1 | tail -5",
    },
}
