"""Transcripts written for a test in a client's own format: Claude Code's JSONL entries and
tool calls, Codex's rollout lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_memory_client.history import Transcript, claude_code


def jsonl(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def claude_entry(kind: str, content: Any, n: int, cwd: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": "s-1",
        "cwd": cwd,
        "message": {"role": kind, "content": content},
        "timestamp": f"2026-10-01T10:{n // 60:02d}:{n % 60:02d}Z",
        "uuid": f"u{n}",
        **extra,
    }


def call(
    n: int, tool: str, tool_input: dict[str, Any], output: str, cwd: str, failed: bool = False
) -> list[dict[str, Any]]:
    """The n-th tool call of a Claude Code transcript (id `t<n>`) and its result."""
    use = {"type": "tool_use", "id": f"t{n}", "name": tool, "input": tool_input}
    done = {"type": "tool_result", "tool_use_id": f"t{n}", "content": output, "is_error": failed}
    return [
        claude_entry("assistant", [use], 10 * n, cwd),
        claude_entry("user", [done], 10 * n + 1, cwd),
    ]


def claude(tmp_path: Path, steps: list[dict[str, Any]]) -> Transcript:
    found = claude_code.read(jsonl(tmp_path / "projects" / "x" / "s-1.jsonl", steps))
    assert found is not None
    return found


def codex_line(kind: str, payload: dict[str, Any], n: int) -> dict[str, Any]:
    return {"timestamp": f"2026-10-02T09:00:{n:02d}Z", "type": kind, "payload": payload}


def function_call(name: str, arguments: dict[str, Any], call_id: str, n: int) -> dict[str, Any]:
    payload = {
        "type": "function_call",
        "name": name,
        "call_id": call_id,
        "arguments": json.dumps(arguments),
    }
    return codex_line("response_item", payload, n)


def function_output(output: str, call_id: str, n: int) -> dict[str, Any]:
    payload = {"type": "function_call_output", "call_id": call_id, "output": output}
    return codex_line("response_item", payload, n)
