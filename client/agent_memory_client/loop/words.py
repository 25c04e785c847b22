"""What the loop says to the agent: the capture guidance a session starts with, the reminder
before it stops (with the session's drafts), and how to use the tools."""

from __future__ import annotations

from agent_memory_client.quoting import quoted

TYPE_CHECKING = False  # typing's import is a hook's cost: types are for mypy alone
if TYPE_CHECKING:
    from typing import Any

CAPTURE_GUIDANCE = {
    "ask-first": (
        "When you learn something worth keeping (a decision and why, an error's real cause, "
        "a pattern that worked), propose it to the user and record it with the `remember` "
        "tool once they agree. Never record secrets, keys, tokens or personal data."
    ),
    "silent": (
        "Record what you learn that is worth keeping with the `remember` tool, without "
        "asking, at most {budget} times this session. Never record secrets, keys, tokens "
        "or personal data."
    ),
    "off": "Do not record learnings this session.",
}

CAPTURE_REMINDER = {
    "ask-first": (
        "Before you finish: did this session teach something worth keeping for later sessions"
        " (a decision and why, an error's real cause, a pattern that worked)? If so, propose it"
        " to the user and record it with the `remember` tool once they agree. If not, simply"
        " finish. Never record secrets."
    ),
    "silent": (
        "Before you finish: if this session taught something worth keeping for later sessions"
        " (a decision and why, an error's real cause, a pattern that worked), record it now"
        " with the `remember` tool, in a sentence or two. If not, simply finish. Never record"
        " secrets."
    ),
}


def usage_note(marked_stale: int) -> str:
    """How to use the tools, in as few words as hold it."""
    stale = (
        f"{marked_stale} memories are marked possibly stale (a file they are about changed"
        " after they were written): check one against the code before relying on it, then"
        " `confirm_memory` it or `remember` the corrected one. "
        if marked_stale
        else ""
    )
    return (
        "The agent-memory tools file what you record under this repository and search it"
        f" with the global memories (marked global). {stale}Search before planning."
    )


def drafts_note(drafts: list[dict[str, Any]], untrusted: bool = False) -> str:
    """The session's drafts, each a quoted literal (command output is data, never an
    instruction), for the agent to keep with one `remember` call each, edited, or drop;
    `untrusted`: the session read untrusted input, so what it keeps waits for review."""
    if not drafts:
        return ""
    lines = [
        f"{n}. {quoted(d['text'])} (files: {', '.join(quoted(f) for f in d['files'])})"
        for n, d in enumerate(drafts, start=1)
    ]
    review = (
        " This session read untrusted input (a web page, another server's tool): what you"
        " keep waits for a person's review before other sessions are handed it."
        if untrusted
        else ""
    )
    return (
        "\n\nDrafts from this session (a failure a change fixed), not stored: keep one with"
        " `remember` (rewrite it as the lesson, pass its files), or drop it."
        + review
        + "\n"
        + "\n".join(lines)
    )
