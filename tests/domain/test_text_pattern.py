"""The OpenAPI pattern of a text field and the rule the service applies are one rule: for
any string of characters, the pattern matches exactly when the service accepts it (a lone
surrogate, which is no character and which JSON cannot carry in UTF-8, is refused by the
service and left out of the pattern)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.errors import InvalidInputError
from app.domain.validation import forbid_hidden_characters, text_pattern

# Characters near every boundary the rules draw: visible ones (letters, pictographs, emoji
# that are not pictographs, a skin tone), white space and line breaks, controls, bidi
# controls, joiners, selectors, tags, fillers.
PARTS = st.sampled_from(
    [
        *"aZ9 é😀💻❤#\t\n\r",
        "\U0001f3fd",  # a skin tone
        *("\u2028", "\u2029", "\x00", "\x1b", "\x7f", "\x9f", "\u202e", "\u2067"),
        *("\u200d", "\u200b", "\ufe0e", "\ufe0f", "\u00ad", "\U000e0041", "\u3164", "\ufeff"),
    ]
)


def accepted(value: str, one_line: bool) -> bool:
    try:
        forbid_hidden_characters(value, "field", one_line=one_line)
    except InvalidInputError:
        return False
    return True


@settings(max_examples=3000, deadline=None)
@given(st.lists(PARTS, max_size=8).map("".join), st.booleans())
def test_the_pattern_matches_exactly_what_the_rule_accepts(value: str, one_line: bool) -> None:
    pattern = re.compile(text_pattern(one_line=one_line))
    # JSON Schema reads a pattern as a search, not a full match: its anchors must hold.
    assert bool(pattern.search(value)) == accepted(value, one_line)


def test_a_required_text_is_not_blank() -> None:
    pattern = re.compile(text_pattern(one_line=False, required=True))
    assert pattern.search("a memory") and pattern.search(" \n x")
    assert not pattern.search("") and not pattern.search(" \n\t")


def test_a_minimum_length_counts_the_trimmed_text() -> None:
    pattern = re.compile(text_pattern(one_line=False, min_chars=5))
    assert pattern.search("abcde") and pattern.search("  a b c  ")
    assert not pattern.search("abcd") and not pattern.search("   abcd   ")
