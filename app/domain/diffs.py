"""Retry delta context: what changed since the last attempt, in as few tokens as it takes."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.text import cut

TASK_CHARS = 200
ERROR_CHARS = 1_000
NEW_FILE_CHARS = 500
DIFF_LINES = 20
DIFF_CHARS = 500
NEW_FILE = "[NEW FILE]"
DELETED_FILE = "[DELETED FILE]"
NO_CHANGES = "[no changes detected]"


def estimate_tokens(text: str) -> int:
    """Characters / 4: close enough for English and code, and needs no tokenizer."""
    return len(text) // 4


def line_diff(before: str, after: str) -> str:
    """'+' added, '-' deleted, '~' changed lines, aligned by content (not by index), so one
    line inserted at the top is one added line. At most 20 lines and 500 characters."""
    old, new = before.splitlines(), after.splitlines()
    lines: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, old, new, autojunk=False
    ).get_opcodes():
        if tag == "insert":
            lines += [f"+ {line}" for line in new[j1:j2]]
        elif tag == "delete":
            lines += [f"- {line}" for line in old[i1:i2]]
        elif tag == "replace":
            paired = min(i2 - i1, j2 - j1)
            lines += [f"~ {line}" for line in new[j1 : j1 + paired]]
            lines += [f"+ {line}" for line in new[j1 + paired : j2]]
            lines += [f"- {line}" for line in old[i1 + paired : i2]]
    if not lines:
        return NO_CHANGES
    shown = lines[:DIFF_LINES]
    if len(lines) > DIFF_LINES:
        shown.append(f"... ({len(lines) - DIFF_LINES} more changed lines)")
    return cut("\n".join(shown), DIFF_CHARS)


@dataclass(frozen=True, slots=True)
class FileDelta:
    path: str
    diff: str


def changed_files(
    current: Sequence[Mapping[str, str]], previous: Sequence[Mapping[str, str]]
) -> list[FileDelta]:
    before = {f["path"]: f.get("content", "") for f in previous}
    now = {f["path"]: f.get("content", "") for f in current}
    deltas = []
    for path, content in now.items():
        if path not in before:
            deltas.append(FileDelta(path, f"{NEW_FILE}\n{content[:NEW_FILE_CHARS]}"))
        elif content != before[path]:
            deltas.append(FileDelta(path, line_diff(before[path], content)))
    deltas += [FileDelta(path, DELETED_FILE) for path in before if path not in now]
    return deltas


def retry_context(
    *,
    task_description: str,
    plan_summary: str,
    current_files: Sequence[Mapping[str, str]],
    previous_files: Sequence[Mapping[str, str]],
    validation_output: str,
    diagnosis: Mapping[str, Any] | None,
    attempt_number: int,
    full_context_tokens: int | None,
) -> dict[str, Any]:
    deltas = changed_files(current_files, previous_files)
    context: dict[str, Any] = {
        "task_summary": cut(task_description.strip(), TASK_CHARS),
        "plan_summary": plan_summary.strip(),
        "latest_error": cut(validation_output.strip(), ERROR_CHARS),
        "changed_files": [{"path": d.path, "diff": d.diff} for d in deltas],
        "diagnosis": dict(diagnosis) if diagnosis else None,
        "attempt_number": attempt_number,
    }
    estimated = estimate_tokens(json.dumps(context, ensure_ascii=False))
    if full_context_tokens is None:
        everything = [task_description, plan_summary, validation_output]
        everything += [f.get("content", "") for f in current_files]
        full_context_tokens = estimate_tokens("".join(everything))
    saved = max(full_context_tokens - estimated, 0)
    context["estimated_tokens"] = estimated
    context["saved_tokens"] = saved
    context["saved_percent"] = (
        round(100 * saved / full_context_tokens, 1) if full_context_tokens else 0.0
    )
    return context
