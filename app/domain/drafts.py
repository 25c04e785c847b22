"""A session's drafts: what the hooks saw the agent learn (a failed command that a change
then fixed), kept beside the session, never as a memory: no search, snapshot or recall serves
one. The session's stop lists them for the agent to keep (one `remember`, rewritten as it
likes) or drop; they go when the session ends. Few and short by construction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.errors import InvalidInputError
from app.domain.validation import clean_paths, clean_text

MAX_DRAFTS = 3  # a session keeps its newest three
DRAFT_CHARS = 500
DRAFT_FILES = 10


@dataclass(frozen=True, slots=True)
class DraftText:
    """A draft as a hook sends it (the text and the files it is about), before its rules."""

    text: str
    files: Sequence[str] | None = None


@dataclass(frozen=True, slots=True)
class Draft:
    text: str
    files: tuple[str, ...] = ()


def draft_of(draft: DraftText) -> Draft:
    text = clean_text(draft.text, "text", max_chars=DRAFT_CHARS)
    if not text:
        raise InvalidInputError("text must not be empty", field="text")
    return Draft(text=text, files=clean_paths(draft.files, "files", DRAFT_FILES))
