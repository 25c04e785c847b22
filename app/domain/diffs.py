"""Retry delta context: what changed since the last attempt, in as few tokens as it takes."""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.domain.inputs.retry import FileState, RetryRequest
from app.domain.text import cut, estimate_tokens

TASK_CHARS = 200
ERROR_CHARS = 1_000
NEW_FILE_CHARS = 500
DIFF_LINES = 20
DIFF_CHARS = 500
NEW_FILE = "[NEW FILE]"
DELETED_FILE = "[DELETED FILE]"
NO_CHANGES = "[no changes detected]"


# difflib aligns lines in worse than quadratic time on repetitive input (docs/input-rules.md,
# "Why the diff is bounded", has its times). It aligns only a middle of at most
# ALIGN_LINES a side, and a request's alignments at most ALIGN_BUDGET line pairs in all;
# past either, the linear fallback lists the lines one side has and the other lacks.
ALIGN_LINES = 300
ALIGN_BUDGET = 1_000_000


class DiffBudget:
    """Line pairs that difflib may still compare for one request."""

    def __init__(self, pairs: int = ALIGN_BUDGET) -> None:
        self.pairs = pairs

    def take(self, pairs: int) -> bool:
        if pairs > self.pairs:
            return False
        self.pairs -= pairs
        return True


def _aligned(old: list[str], new: list[str]) -> list[str]:
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
    return lines


def _unaligned(old: list[str], new: list[str]) -> list[str]:
    """Linear time: the lines only the new side has, then those only the old side has."""
    remaining = Counter(old)
    added = []
    for line in new:
        if remaining[line]:
            remaining[line] -= 1
        else:
            added.append(f"+ {line}")
    left = Counter(new)
    deleted = []
    for line in old:
        if left[line]:
            left[line] -= 1
        else:
            deleted.append(f"- {line}")
    return added + deleted


def line_diff(before: str, after: str, budget: DiffBudget | None = None) -> str:
    """'+' added, '-' deleted, '~' changed lines, aligned by content (not by index), so one
    line inserted at the top is one added line. At most 20 lines and 500 characters."""
    old, new = before.splitlines(), after.splitlines()
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old, new = old[head : len(old) - tail], new[head : len(new) - tail]
    budget = budget or DiffBudget()
    if (max(len(old), len(new)) <= ALIGN_LINES and budget.take(len(old) * len(new))) or not (
        old and new
    ):
        lines = _aligned(old, new)
    else:
        lines = _unaligned(old, new)
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


def changed_files(current: Sequence[FileState], previous: Sequence[FileState]) -> list[FileDelta]:
    before = {f.path: f.content for f in previous}
    now = {f.path: f.content for f in current}
    budget = DiffBudget()
    deltas = []
    for path, content in now.items():
        if path not in before:
            deltas.append(FileDelta(path, f"{NEW_FILE}\n{content[:NEW_FILE_CHARS]}"))
        elif content != before[path]:
            deltas.append(FileDelta(path, line_diff(before[path], content, budget)))
    deltas += [FileDelta(path, DELETED_FILE) for path in before if path not in now]
    return deltas


def retry_context(request: RetryRequest) -> dict[str, Any]:
    """What changed since the last attempt, the latest error, and the tokens it saves.
    Linear in the input but for the alignments DiffBudget bounds: run it off the loop."""
    deltas = changed_files(request.current_files, request.previous_files)
    context: dict[str, Any] = {
        "task_summary": cut(request.task_description.strip(), TASK_CHARS),
        "plan_summary": request.plan_summary.strip(),
        "latest_error": cut(request.validation_output.strip(), ERROR_CHARS),
        "changed_files": [{"path": d.path, "diff": d.diff} for d in deltas],
        "diagnosis": dict(request.diagnosis) if request.diagnosis else None,
        "attempt_number": request.attempt_number,
    }
    estimated = estimate_tokens(json.dumps(context, ensure_ascii=False))
    full_context_tokens = request.full_context_tokens
    if full_context_tokens is None:
        everything = [request.task_description, request.plan_summary, request.validation_output]
        everything += [f.content for f in request.current_files]
        full_context_tokens = sum(estimate_tokens(text) for text in everything)
    saved = max(full_context_tokens - estimated, 0)
    context["estimated_tokens"] = estimated
    context["saved_tokens"] = saved
    context["saved_percent"] = (
        round(100 * saved / full_context_tokens, 1) if full_context_tokens else 0.0
    )
    return context
