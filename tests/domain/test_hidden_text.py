"""Hidden and deceptive text: a joiner or a presentation selector only inside an emoji
sequence, and identifiers in one script (UTS #39); content text is left alone."""

from __future__ import annotations

import pytest
import regex

from app.domain import unicode_tables
from app.domain.errors import InvalidInputError
from app.domain.scripts import mixes_scripts
from app.domain.validation import (
    IDENTIFIER_FIELDS,
    Limits,
    clean_content,
    clean_line,
    clean_metadata,
    forbid_hidden_characters,
)


@pytest.mark.parametrize(
    "text",
    [
        "👩\u200d💻 pairing", "👩🏽\u200d💻", "🏳\ufe0f\u200d🌈", "❤\ufe0f", "1\ufe0f\u20e3",
        "☺\ufe0e", "plain text",
    ],
)  # fmt: skip
def test_emoji_sequences_pass(text: str) -> None:
    forbid_hidden_characters(text, "content")


@pytest.mark.parametrize(
    "text",
    [
        "a\u200db\ufe0fc",
        "a\u200db",
        "x\ufe0f",
        "😀\ufe0f\ufe0f",
        "\u200d😀",
        "😀\u200d",
        "😀\u200da",
    ],
)
def test_a_joiner_or_selector_outside_an_emoji_is_refused(text: str) -> None:
    with pytest.raises(InvalidInputError, match="invisible character"):
        forbid_hidden_characters(text, "content")


@pytest.mark.parametrize(
    ("text", "mixed"),
    [
        ("acme/api", False), ("аcme/api", True), ("ab-тест", True), ("тест", False),
        ("api-文档", False), ("日本語のテスト", False), ("latin-한국어", False),
        ("v1.2_x", False), ("über-straße", False), ("ｆｕｌｌ", False), ("Ελληνικά", False),
    ],
)  # fmt: skip
def test_mixed_scripts_by_uts_39(text: str, mixed: bool) -> None:
    assert mixes_scripts(text) is mixed


def test_identifiers_are_one_script_and_content_is_left_alone() -> None:
    for field in sorted(IDENTIFIER_FIELDS - {"memory_type"}):
        with pytest.raises(InvalidInputError, match="mixes scripts"):
            clean_line("аcme", field)
    with pytest.raises(InvalidInputError, match="mixes scripts"):
        clean_metadata({"аuthor": "x"}, Limits())
    assert clean_metadata({"author": "аcme (Cyrillic а)"}, Limits())
    assert clean_content("The Cyrillic а in аcme/api looks Latin", Limits())


def test_the_unicode_tables_are_the_unicode_data() -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    for name, prop in (
        ("EXTENDED_PICTOGRAPHIC", "Extended_Pictographic"),
        ("EMOJI", "Emoji"),
        ("EMOJI_MODIFIER", "Emoji_Modifier"),
    ):
        table = regex.compile(f"[{getattr(unicode_tables, name)}]")
        have = {c for c in every if table.match(c)}
        want = {c for c in every if regex.match(rf"\p{{{prop}}}", c)}
        assert have == want, f"{name} drifted from the Unicode data: regenerate it"
