"""Input rules every writer obeys, whatever the door (REST, MCP over HTTP or stdio, CLI).

Each rule is here once; the services apply them, so a door cannot forget one. A rejected
value, or a list with too many items, raises InvalidInputError (422) naming the field.
"""

from __future__ import annotations

import json
import posixpath
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from app.domain.errors import InvalidInputError
from app.domain.memory import MEMORY_TYPE_PATTERN
from app.domain.provenance import DEFAULT_UNTRUSTED_POLICY, UntrustedPolicy
from app.domain.scripts import mixes_scripts
from app.domain.text import PATTERN_END
from app.domain.unicode_tables import EMOJI, EMOJI_MODIFIER, EXTENDED_PICTOGRAPHIC

# NUL cannot be stored in PostgreSQL text. Other C0 and C1 controls (but tab, LF, CR) and
# DEL have no business in a memory: ESC and CSI start terminal escapes that rewrite what a
# person sees. Bidi overrides and isolates reorder text on screen (Trojan Source), and a
# lone surrogate cannot be encoded at all. (Classes are written as regex escapes: they are
# also published as OpenAPI patterns. Those leave surrogates out: a surrogate is not a
# character, and pattern engines over Unicode scalar values refuse to name one.)
_CONTROL_CLASS = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_FORBIDDEN_CLASS = _CONTROL_CLASS + r"\ud800-\udfff"
# Unicode's default-ignorable code points (DerivedCoreProperties.txt): drawn as nothing,
# yet read by a model. Tag characters (U+E0000 block) spell whole instructions no person
# sees; zero-width spaces and joiners, soft hyphens, fillers and variation selectors can
# carry hidden text too. Refused, but inside emoji sequences, for what they need: a
# zero-width joiner between two pictographs (the first may carry a skin tone or a
# presentation selector), and one text or emoji presentation selector (U+FE0E, U+FE0F)
# after an emoji. Between ordinary letters (`a\u200db\ufe0fc`) they are a hidden channel.
_INVISIBLE_CLASS = (
    r"\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    r"\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    r"\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
# A one-line field (a name, a tag, a repository) is printed on one line of a snapshot that
# is pasted into an agent's prompt: no line breaks, tabs or line separators either.
_LINE_BREAK_CLASS = r"\t\n\r\u2028\u2029"
_FORBIDDEN = re.compile(f"[{_FORBIDDEN_CLASS}]")
_INVISIBLE = re.compile(f"[{_INVISIBLE_CLASS}]")
_LINE_BREAKS = re.compile(f"[{_LINE_BREAK_CLASS}]")
_EMOJI_JOINER = "\u200d"
_PRESENTATION = ("\ufe0e", "\ufe0f")
_PICTOGRAPH = re.compile(f"[{EXTENDED_PICTOGRAPHIC}]")
_SKIN_TONE = re.compile(f"[{EMOJI_MODIFIER}]")
_TAKES_PRESENTATION = re.compile(f"[{EMOJI}{EXTENDED_PICTOGRAPHIC}]")
# The same two rules as lookarounds, for the published pattern: each character is matched
# by exactly one branch, so the pattern runs in linear time.
_JOINER_PATTERN = (
    rf"(?:(?<=[{EXTENDED_PICTOGRAPHIC}{EMOJI_MODIFIER}])"
    rf"|(?<=[{EXTENDED_PICTOGRAPHIC}][\ufe0e\ufe0f]))\u200d(?=[{EXTENDED_PICTOGRAPHIC}])"
)
_PRESENTATION_PATTERN = rf"(?<=[{EMOJI}{EXTENDED_PICTOGRAPHIC}])[\ufe0e\ufe0f]"


def text_pattern(
    *, one_line: bool, required: bool = False, min_chars: int = 0, lookahead: str = ""
) -> str:
    """The same rules as a regular expression, for the OpenAPI document (over characters,
    which a surrogate is not): visible characters, a zero-width joiner only between
    pictographs, a presentation selector only after an emoji. `required`: not blank;
    `min_chars`: at least that many once trimmed; `lookahead`: a rule of the field's own,
    as a lookahead from the start (the domain matches the same one)."""
    breaks = _LINE_BREAK_CLASS if one_line else ""
    visible = f"[^{_CONTROL_CLASS}{_INVISIBLE_CLASS}{breaks}]"
    text = rf"(?:{visible}|{_JOINER_PATTERN}|{_PRESENTATION_PATTERN})*" + PATTERN_END
    if min_chars > 1:
        return rf"^{lookahead}(?=\s*\S[\s\S]{{{min_chars - 2},}}\S\s*{PATTERN_END})" + text
    return "^" + lookahead + (r"(?=[\s\S]*\S)" if required or min_chars else "") + text


def _invisible_at(value: str) -> int | None:
    """The index of the first invisible character that is not part of an emoji, or None."""
    for match in _INVISIBLE.finditer(value):
        i, char = match.start(), match.group()
        before = value[i - 1] if i > 0 else ""
        after = value[i + 1] if i + 1 < len(value) else ""
        if char == _EMOJI_JOINER and _PICTOGRAPH.match(after) and _joins_after(value, i):
            continue
        if char in _PRESENTATION and _TAKES_PRESENTATION.match(before):
            continue
        return i
    return None


def _joins_after(value: str, i: int) -> bool:
    """Whether a joiner at `i` follows a pictograph (with a skin tone, or a selector)."""
    before = value[i - 1] if i > 0 else ""
    if _PICTOGRAPH.match(before) or _SKIN_TONE.match(before):
        return True
    return before in _PRESENTATION and i >= 2 and bool(_PICTOGRAPH.match(value[i - 2]))


@dataclass(frozen=True, slots=True)
class Limits:
    """How large each input may be. The first group is configurable (see config.py)."""

    max_content_chars: int = 20_000
    max_context_chars: int = 4_000
    max_tags: int = 32
    max_tag_chars: int = 64
    max_metadata_bytes: int = 16_384
    max_batch: int = 500
    max_query_chars: int = 2_000
    # Each distinct query term costs one bounded index read; past this many the rest of
    # the query is dropped (and the answer says so).
    max_query_terms: int = 32
    max_metadata_depth: int = 8
    # What a write holding a credential gets: refused (422), or stored with it redacted.
    secrets_policy: Literal["refuse", "redact"] = "refuse"
    # What a memory written after untrusted input gets (app/domain/provenance.py): held
    # for a person ("wait"), handed over marked ("mark"), or handed over ("hand-over").
    untrusted_memories: UntrustedPolicy = DEFAULT_UNTRUSTED_POLICY


# Every other text field, by name, in characters. The same name means the same rule in
# every operation that takes it.
FIELD_CHARS: dict[str, int] = {
    "category": 200,
    "source_repo": 300,
    "task_id": 300,
    "name": 300,
    "source": 100,
    "memory_type": 40,
    "reasoning": 5_000,
    "references": 2_000,
    "task_description": 2_000,
    "plan_steps": 2_000,
    "plan_summary": 20_000,
    "files_changed": 1_000,
    "model": 200,
    "action": 2_000,
    "error": 4_000,
    "agent": 200,
    "task": 2_000,
    "summary": 10_000,
    "file": 1_000,
    "description": 1_000,
    "key_name": 200,
    "person": 200,
    "tenant": 100,
    "path": 1_000,
    "file_content": 1_000_000,
    "retry_text": 100_000,
    "validation_output": 1_000_000,
    "git_branch": 200,
}
# How many items each list field may hold.
LIST_ITEMS: dict[str, int] = {
    "references": 50,
    "plan_steps": 100,
    "attempt_history": 500,
    "files_changed": 500,
    "key_changes": 100,
    "files": 500,
    "memory_type": 20,
    "changed_files": 500,
    "history": 100,
}


def forbid_hidden_characters(value: str, field: str, *, one_line: bool = False) -> None:
    """Every stored text passes here, at every door: no control, bidi-override, surrogate
    or invisible (default-ignorable) character."""
    if _FORBIDDEN.search(value):
        raise InvalidInputError(
            f"{field} contains control, bidi-override or surrogate characters", field=field
        )
    at = _invisible_at(value)
    if at is not None:
        code = ord(value[at])
        name = unicodedata.name(value[at], "an unnamed default-ignorable character")
        raise InvalidInputError(
            f"{field} contains an invisible character (U+{code:04X} {name}) at position {at}:"
            " text no person sees must not reach an agent",
            field=field,
        )
    if one_line and _LINE_BREAKS.search(value):
        raise InvalidInputError(f"{field} must be one line", field=field)


def clean_text(value: str, field: str, *, max_chars: int | None = None) -> str:
    """Multi-line text: hidden characters refused, surrounding white space trimmed."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string", field=field)
    forbid_hidden_characters(value, field)
    value = value.strip()
    limit = FIELD_CHARS.get(field) if max_chars is None else max_chars
    if limit is not None and len(value) > limit:
        raise InvalidInputError(
            f"{field} is {len(value)} characters; the limit is {limit}", field=field
        )
    return value


def clean_line(value: str | None, field: str, *, max_chars: int | None = None) -> str | None:
    """An optional one-line field: None when absent or blank. An identifier field is
    written in one script (IDENTIFIER_FIELDS)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string", field=field)
    forbid_hidden_characters(value, field, one_line=True)
    if field in IDENTIFIER_FIELDS:
        forbid_mixed_scripts(value, field)
    return clean_text(value, field, max_chars=max_chars) or None


# Names that file, filter or label memories: each in one script (app/domain/scripts.py),
# so that no look-alike letter files a memory where a person would not look for it.
IDENTIFIER_FIELDS = frozenset(
    {"source_repo", "tags", "category", "memory_type", "tenant", "git_branch", "person"}
)


def forbid_mixed_scripts(value: str, field: str) -> None:
    if mixes_scripts(value):
        raise InvalidInputError(
            f"{field} mixes scripts (as a Cyrillic а in a Latin name would): write it in one"
            " script (Unicode's UTS #39)",
            field=field,
        )


def clean_folded(value: str | None, field: str) -> str | None:
    """An optional field shown on one line (a session's task, a key change's description):
    line breaks a client sends are folded into spaces rather than refused, since agents
    paste tasks as they were given."""
    cleaned = clean_optional_text(value, field)
    return " ".join(cleaned.split()) if cleaned else None


def clean_optional_text(value: str | None, field: str) -> str | None:
    """An optional multi-line field: None when absent or blank."""
    return None if value is None else (clean_text(value, field) or None)


def clean_content(content: str, limits: Limits, field: str = "content") -> str:
    content = clean_text(content, field, max_chars=limits.max_content_chars)
    if not content:
        raise InvalidInputError(f"{field} must not be empty", field=field)
    return content


def clean_context(context: str | None, limits: Limits, field: str = "context") -> str | None:
    """A memory's context, or None when there is none (absent or blank)."""
    if context is None:
        return None
    return clean_text(context, field, max_chars=limits.max_context_chars) or None


T = TypeVar("T")


def bounded_list(items: Sequence[T] | None, field: str, limit: int | None = None) -> list[T]:
    if items is None:
        return []
    if isinstance(items, str) or not isinstance(items, Sequence):
        raise InvalidInputError(f"{field} must be a list", field=field)
    limit = LIST_ITEMS[field] if limit is None else limit
    if len(items) > limit:
        raise InvalidInputError(
            f"{field} holds {len(items)} items; the limit is {limit}", field=field
        )
    return list(items)


def clean_lines(items: Sequence[str] | None, field: str) -> list[str]:
    """A list of one-line strings (file paths, references), each within its field's limit."""
    return [clean_line(item, field) or "" for item in bounded_list(items, field)]


def clean_tags(tags: Sequence[str] | None, limits: Limits) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for tag in bounded_list(tags, "tags", limits.max_tags):
        cleaned = clean_line(tag, "tags", max_chars=limits.max_tag_chars)
        if cleaned:
            seen.setdefault(cleaned, None)
    return tuple(seen)


# Each key and each string in metadata, at most (besides MAX_METADATA_BYTES for the whole,
# which JSON Schema cannot state: these it can, and a generated object rarely outgrows the
# whole while its parts keep within them).
METADATA_KEY_CHARS = 100
METADATA_TEXT_CHARS = 2_000


def clean_metadata(metadata: Mapping[str, Any] | None, limits: Limits) -> dict[str, Any]:
    """JSON of bounded size and depth, with no hidden characters in any key or string."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInputError("metadata must be an object", field="metadata")
    # Depth first, without recursion: a value nested 500 deep must not reach json.dumps.
    stack: list[tuple[Any, int]] = [(metadata, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limits.max_metadata_depth:
            raise InvalidInputError(
                f"metadata nests deeper than {limits.max_metadata_depth} levels", field="metadata"
            )
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise InvalidInputError("metadata keys must be strings", field="metadata")
                forbid_hidden_characters(key, "metadata")
                forbid_mixed_scripts(key, "metadata")
                if len(key) > METADATA_KEY_CHARS:
                    raise InvalidInputError(
                        f"a metadata key is longer than {METADATA_KEY_CHARS} characters",
                        field="metadata",
                    )
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            forbid_hidden_characters(value, "metadata")
            if len(value) > METADATA_TEXT_CHARS:
                raise InvalidInputError(
                    f"a metadata string is longer than {METADATA_TEXT_CHARS} characters",
                    field="metadata",
                )
        elif value is not None and not isinstance(value, bool | int | float):
            raise InvalidInputError("metadata must be JSON", field="metadata")
    try:
        encoded = json.dumps(metadata, ensure_ascii=False, allow_nan=False).encode()
    except ValueError as exc:  # NaN or infinity: not JSON
        raise InvalidInputError(
            "metadata must be JSON (no NaN or infinity)", field="metadata"
        ) from exc
    if len(encoded) > limits.max_metadata_bytes:
        raise InvalidInputError(
            f"metadata is larger than {limits.max_metadata_bytes} bytes", field="metadata"
        )
    return dict(metadata)


def one_of(value: str | None, field: str, choices: Sequence[str], default: str) -> str:
    if value is None:
        return default
    if value not in choices:
        shown = value[:40] if isinstance(value, str) else type(value).__name__
        raise InvalidInputError(
            f"{field} '{shown}' is not one of: {', '.join(choices)}", field=field
        )
    return value


def number_in(value: float, field: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise InvalidInputError(f"{field} must be between {low:g} and {high:g}", field=field)
    return value


def forbid_unknown(fields: Mapping[str, Any], known: Sequence[str], where: str | None) -> None:
    """Unknown keys of an object (named `where`, None at the top) are refused the way the
    doors' parsers refuse unknown fields, so every door gives the same answer."""
    unknown = sorted(set(fields) - set(known))
    if unknown:
        name = f"{where}.{unknown[0]}" if where else unknown[0]
        raise InvalidInputError("Extra inputs are not permitted", field=name)


def clean_memory_type(value: str | None, field: str = "memory_type") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(MEMORY_TYPE_PATTERN, value):
        shown = value[:40] if isinstance(value, str) else type(value).__name__
        raise InvalidInputError(
            f"memory_type '{shown}' is not a lower_snake_case name of at most 40 characters",
            field=field,
        )
    return value


# A commit id: 7 to 64 hex digits (a short or full SHA-1 or SHA-256), either case, white
# space around it trimmed; blank is none.
COMMIT_PATTERN = r"^\s*(?:[0-9a-fA-F]{7,64})?\s*" + PATTERN_END
# A commit that must be there (a history entry's): not blank.
NAMED_COMMIT_PATTERN = r"^\s*[0-9a-fA-F]{7,64}\s*" + PATTERN_END


def clean_commit(value: str | None, field: str = "git_commit") -> str | None:
    """The commit id, lower case, or None."""
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(COMMIT_PATTERN, value):
        raise InvalidInputError(f"{field} must be a commit id (7 to 64 hex digits)", field=field)
    return value.strip().lower() or None


# The files one memory is about, at most.
MEMORY_FILES = 50


def clean_paths(
    items: Sequence[str] | None, field: str, limit: int = MEMORY_FILES
) -> tuple[str, ...]:
    """Repository-relative file paths, normalised (`./a//b` and `a\\b` are `a/b`), each
    once, in the order given; a path that leaves the repository (`../x`) is refused."""
    seen: dict[str, None] = {}
    raws = [
        clean_line(item, field, max_chars=FIELD_CHARS["path"]) or ""
        for item in bounded_list(items, field, limit)
    ]
    for raw in raws:
        path = posixpath.normpath(raw.replace("\\", "/")) if raw else ""
        if path in ("", "."):
            continue
        if path == ".." or path.startswith("../"):
            raise InvalidInputError(
                f"{field} holds a path outside the repository: {path[:80]}", field=field
            )
        seen.setdefault(path, None)
    return tuple(seen)
