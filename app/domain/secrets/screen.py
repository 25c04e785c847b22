"""The screen every stored text passes: refused or redacted by the tenant's policy, each
refusal naming its field; a write shape's every string by its type, and a memory's fields
read against each other for a credential cut in two."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal, TypeVar

from app.domain.errors import InvalidInputError
from app.domain.memory import NewMemory
from app.domain.secrets.find import Finding, find_secrets, formats_in, redacted

SecretsPolicy = Literal["refuse", "redact"]


def screen(value: str, field: str, policy: SecretsPolicy) -> str:
    """The text as it may be stored: refused (422 naming the field and the kind of secret,
    never the secret) or with each secret replaced by [REDACTED:kind]."""
    findings = find_secrets(value)
    if not findings:
        return value
    if policy == "redact":
        return redacted(value, findings)
    kinds = ", ".join(sorted({f.kind for f in findings}))
    raise InvalidInputError(
        f"{field} holds what looks like a secret ({kinds}); memories are shared with every"
        " agent of the tenant, so credentials are never stored. Remove it, or reference where"
        " it is kept instead",
        field=field,
    )


def screen_json(value: Any, field: str, policy: SecretsPolicy) -> Any:
    """Every string in a JSON value (keys too), each named by its path."""
    if isinstance(value, str):
        return screen(value, field, policy)
    if isinstance(value, Mapping):
        return {
            screen(k, field, policy): screen_json(v, f"{field}.{k}", policy)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [screen_json(v, f"{field}.{i}", policy) for i, v in enumerate(value)]
    return value


def strings_of(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield k
            yield from strings_of(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_of(v)


T = TypeVar("T")


def screen_fields(record: T, policy: SecretsPolicy, prefix: str = "") -> T:
    """Every string a write shape (a dataclass) holds, screened, each refusal naming its
    field: strings, lists of them, mappings (metadata, key changes) and nested shapes, by
    their type. A field added to a shape is screened without being named here."""
    assert dataclasses.is_dataclass(record) and not isinstance(record, type)
    changes = {
        f.name: _screened(getattr(record, f.name), f"{prefix}{f.name}", policy)
        for f in dataclasses.fields(record)
    }
    return dataclasses.replace(record, **changes)


def _screened(value: Any, field: str, policy: SecretsPolicy) -> Any:
    if isinstance(value, str):
        return screen(value, field, policy)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return screen_fields(value, policy, f"{field}.")
    if isinstance(value, Mapping):
        return screen_json(value, field, policy)
    if isinstance(value, (list, tuple)):
        return type(value)(_screened(v, f"{field}.{i}", policy) for i, v in enumerate(value))
    return value


# A credential has no white space: one cut in two is the last word of one field and the
# first word of another, read together.
_LAST_WORD = re.compile(r"\S+$")
_MIN_SPLIT_CHARS = 16  # shorter than any fixed format
# Fields whose values come from a closed vocabulary: no one cuts a key into `general`, and
# read against them a content ending in half a token would complete it by accident.
_VOCABULARY_FIELDS = frozenset({"memory_type", "trust_level", "confidence"})
_FIRST_WORD = re.compile(r"^\S+")


def screen_memory(new: NewMemory, policy: SecretsPolicy, prefix: str = "") -> NewMemory:
    """Every stored text of a memory screened (every field the field table lets a writer
    set), each refusal naming its field (`prefix` names the item of a batch); then each
    field's end read against every other field's start, for a credential cut in two."""
    screened = screen_fields(new, policy, prefix)
    texts = {
        f.name: getattr(screened, f.name)
        for f in dataclasses.fields(screened)
        if isinstance(getattr(screened, f.name), str) and f.name not in _VOCABULARY_FIELDS
    }
    while (split := next(_split_across(texts), None)) is not None:
        first, second, finding, at = split
        if policy == "refuse":
            raise InvalidInputError(
                f"{prefix}{first} and {prefix}{second} hold what looks like a secret cut in"
                f" two ({finding.kind}); memories are shared with every agent of the tenant,"
                " so credentials are never stored",
                field=f"{prefix}{first}",
            )
        label = f"[REDACTED:{finding.kind}]"
        head, tail = finding.value[:at], finding.value[at:]
        texts[first] = texts[first][: len(texts[first]) - len(head)] + label
        texts[second] = label + texts[second][len(tail) :]
        screened = dataclasses.replace(screened, **{first: texts[first], second: texts[second]})
    return screened


def _split_across(texts: Mapping[str, str]) -> Iterator[tuple[str, str, Finding, int]]:
    """(first field, second field, the credential, where the cut is in it) for a fixed-format
    credential that only the end of one field and the start of the other make whole."""
    ends = {name: _LAST_WORD.search(text) for name, text in texts.items()}
    starts = {name: _FIRST_WORD.match(text) for name, text in texts.items()}
    for first, end in ends.items():
        for second, start_word in starts.items():
            if first == second or end is None or start_word is None:
                continue
            tail, head = end.group(), start_word.group()
            joined = tail + head
            if len(joined) < _MIN_SPLIT_CHARS:
                continue
            for finding in formats_in(joined):
                start = joined.find(finding.value)
                if start < len(tail) < start + len(finding.value):
                    yield first, second, finding, len(tail) - start


def memory_text_size(new: NewMemory) -> int:
    """How much text screening a memory reads (to decide whether it leaves the event loop)."""
    return len(new.content) + len(new.context or "") + sum(len(s) for s in strings_of(new.metadata))
