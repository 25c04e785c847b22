"""Whether an identifier mixes scripts, by Unicode's rules (UTS #39, section 5: mixed-script
detection, at its Highly Restrictive level). `аcme/api` with a Cyrillic а reads as
`acme/api` to a person and to a model, yet files memories elsewhere: an identifier (a
repository, a tag, a category, a metadata key) must be written in one script, where Latin
may go with Han and Japanese kana, Han with Bopomofo, or Han with Hangul, as people write.
Content text is left alone: prose quotes any script it likes.

Each character's Script_Extensions comes from the `regex` module (Python's unicodedata has
no script property); characters of Common or Inherited script (digits, punctuation,
combining marks) go with any script.
"""

from __future__ import annotations

from functools import cache, lru_cache

import regex

from app.domain.unicode_tables import SCRIPT_CODES

# UTS #39's augmented script sets: a writing system that uses more than one script.
_AUGMENTED = {
    "Hani": {"Hanb", "Jpan", "Kore"},
    "Hira": {"Jpan"},
    "Kana": {"Jpan"},
    "Hrkt": {"Jpan"},
    "Hang": {"Kore"},
    "Bopo": {"Hanb"},
}
# What Latin may go with at the Highly Restrictive level.
_WITH_LATIN = frozenset({"Jpan", "Hanb", "Kore"})
_LATIN = frozenset({"Latn"})


@cache
def _scripts() -> tuple[tuple[str, regex.Pattern[str]], ...]:
    return tuple((code, regex.compile(rf"\p{{scx={code}}}")) for code in SCRIPT_CODES)


@lru_cache(maxsize=8192)
def script_set(char: str) -> frozenset[str] | None:
    """The character's augmented script set; None for one that goes with any script."""
    if char.isascii():
        return _LATIN if char.isalpha() else None
    found = {code for code, pattern in _scripts() if pattern.match(char)}
    if not found:
        # Common or Inherited, or unassigned: an unassigned code point is its own script.
        return None if regex.match(r"\p{scx=Zyyy}|\p{scx=Zinh}", char) else frozenset({"Zzzz"})
    for code in list(found):
        found |= _AUGMENTED.get(code, set())
    return frozenset(found)


def _resolved(chars: str) -> frozenset[str] | None:
    """The scripts every character shares (None: no character limits it)."""
    resolved: frozenset[str] | None = None
    for char in chars:
        scripts = script_set(char)
        if scripts is not None:
            resolved = scripts if resolved is None else resolved & scripts
    return resolved


def mixes_scripts(text: str) -> bool:
    """True when no one script (or Latin with Japanese, Chinese or Korean) covers `text`."""
    resolved = _resolved(text)
    if resolved is None or resolved:
        return False
    others = _resolved("".join(c for c in text if script_set(c) != _LATIN))
    return not (others and others & _WITH_LATIN)
