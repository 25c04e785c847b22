"""OpenAPI keywords for the rules the domain enforces, read from the domain's own tables and
patterns: documentation for clients (and for schemathesis), never a second check."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from app.domain.memory import MEMORY_TYPE_PATTERN
from app.domain.validation import (
    COMMIT_PATTERN,
    FIELD_CHARS,
    LIST_ITEMS,
    METADATA_KEY_CHARS,
    METADATA_TEXT_CHARS,
    NAMED_COMMIT_PATTERN,
    Limits,
    text_pattern,
)

DEFAULT_LIMITS = Limits()
# The limits Settings may change (LIMIT_* in docs/configuration.md).
CONFIGURED = frozenset(f.name for f in dataclasses.fields(Limits))


def as_served(schema: Any, limits: Limits) -> Any:
    """The OpenAPI document as this server enforces it: each configured limit at its value,
    the metadata marker made a reference to the recursive metadata schema."""
    if isinstance(schema, dict):
        if schema.pop("x-metadata", None):
            reference = {"$ref": "#/components/schemas/Metadata"}
            if "anyOf" in schema:  # optional: the object branch is the reference
                schema["anyOf"] = [
                    reference if branch.get("type") == "object" else branch
                    for branch in schema["anyOf"]
                ]
            else:
                for key in ("type", "additionalProperties"):
                    schema.pop(key, None)
                schema.update(reference)
        components = schema.get("components", {}).get("schemas")
        if isinstance(components, dict) and "Metadata" not in components:
            components.update(metadata_schemas(limits.max_metadata_depth))
        name = schema.pop("x-limit", None)
        if name is not None:
            keyword = "maxItems" if "maxItems" in schema else "maxLength"
            schema[keyword] = getattr(limits, name)
        for value in schema.values():
            as_served(value, limits)
    elif isinstance(schema, list):
        for value in schema:
            as_served(value, limits)
    return schema


# The text rule as a pattern is some 10,000 characters of Unicode classes: in the published
# document (and /docs) a pattern that long is left out and the rule named in words; the
# full document, /openapi.full.json, keeps it for contract testers and generators.
PUBLISHED_PATTERN_CHARS = 300
TEXT_RULE_IN_WORDS = (
    "Visible text: no control, invisible or direction-changing characters, an emoji's"
    " joiner only inside the emoji (docs/input-rules.md)."
)


def published(schema: Any) -> Any:
    """A copy of the served document a person can read: each pattern longer than
    PUBLISHED_PATTERN_CHARS replaced by the rule in words, in its schema's description."""
    if isinstance(schema, list):
        return [published(value) for value in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {key: published(value) for key, value in schema.items()}
    pattern = copy.get("pattern")
    if isinstance(pattern, str) and len(pattern) > PUBLISHED_PATTERN_CHARS:
        del copy["pattern"]
        described = copy.get("description")
        copy["description"] = (
            f"{described} {TEXT_RULE_IN_WORDS}" if described else TEXT_RULE_IN_WORDS
        )
    return copy


def documented(
    *,
    chars: str | int | None = None,
    items: str | int | None = None,
    choices: tuple[str, ...] | None = None,
    text: Literal["text", "line"] | None = None,
    required: bool = False,
    min_chars: int = 0,
    lookahead: str = "",
    pattern: str | None = None,
    between: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """OpenAPI keywords for a rule the domain enforces (for clients and docs only). A name
    is a field of FIELD_CHARS / LIST_ITEMS, or of Limits: a configured limit, which the
    served document shows as configured (`x-limit`, filled by `as_served`).
    `text`: the characters a multi-line text or a one-line field may hold (`required`: not
    blank; `min_chars`: at least that many, trimmed; `lookahead`: the field's own rule as a
    lookahead, the domain's). With `items`, `chars`, `text`,
    `pattern` and `choices` apply to each item.
    `between`: a number's inclusive range."""
    value: dict[str, Any] = {}
    if chars is not None:
        value.update(_limit("maxLength", chars, FIELD_CHARS))
    if text is not None:
        pattern = text_pattern(
            one_line=text == "line", required=required, min_chars=min_chars, lookahead=lookahead
        )
    if pattern is not None:
        value["pattern"] = pattern
    if choices is not None:
        value["enum"] = list(choices)
    if between is not None:
        value["minimum"], value["maximum"] = between
    if items is None:
        return value
    each = {"items": {"type": "string", **value}} if value else {}
    return {**_limit("maxItems", items, LIST_ITEMS), **each}


def _limit(keyword: str, value: str | int, table: dict[str, int]) -> dict[str, Any]:
    if isinstance(value, int):
        return {keyword: value}
    if value in CONFIGURED:
        return {keyword: getattr(DEFAULT_LIMITS, value), "x-limit": value}
    return {keyword: table[value]}


def line_rules(chars: str | int | None = None, **more: Any) -> dict[str, Any]:
    """A one-line field's keywords."""
    return documented(chars=chars, text="line", **more)


def text_rules(chars: str | int | None = None, **more: Any) -> dict[str, Any]:
    """A multi-line text's keywords."""
    return documented(chars=chars, text="text", **more)


TAGS = line_rules("max_tag_chars", items="max_tags")
COMMIT = documented(pattern=COMMIT_PATTERN)
NAMED_COMMIT = documented(pattern=NAMED_COMMIT_PATTERN)
MEMORY_TYPES = documented(items="memory_type", pattern=MEMORY_TYPE_PATTERN)
# Any JSON, every key and string in it within the text rule, nested no deeper than the
# limit (its size in bytes is checked by the service alone: JSON Schema cannot state it).
# A marker pydantic leaves alone, made a reference to the components by `as_served`.
METADATA: dict[str, Any] = {"x-metadata": True}


def metadata_schemas(depth: int) -> dict[str, Any]:
    """The components METADATA refers to: an object whose values nest at most `depth`
    levels (the object itself is the first), every key and string within the text rule."""
    text = text_pattern(one_line=False)
    string = {"type": "string", "maxLength": METADATA_TEXT_CHARS, "pattern": text}
    key = {"type": "string", "maxLength": METADATA_KEY_CHARS, "pattern": text}

    def value(level: int) -> dict[str, Any]:
        if level > depth:  # nothing may sit this deep: only empty containers above it
            return {"not": {}}
        return {"$ref": f"#/components/schemas/MetadataValue{level}"}

    schemas: dict[str, Any] = {
        "Metadata": {
            "type": "object",
            "propertyNames": key,
            "additionalProperties": value(2),
        }
    }
    for level in range(2, depth + 1):
        schemas[f"MetadataValue{level}"] = {
            "anyOf": [
                string,
                {"type": ["number", "boolean", "null"]},
                {"type": "array", "items": value(level + 1)},
                {
                    "type": "object",
                    "propertyNames": key,
                    "additionalProperties": value(level + 1),
                },
            ]
        }
    return schemas
