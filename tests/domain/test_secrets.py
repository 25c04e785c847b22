"""The secret screen on the hand-written corpus (bench/secret_corpus.py): every credential
found, in its encoded forms and cut across a memory's fields too, and none of the
look-alikes refused. bench/secrets.py reports the same with LoCoMo and the project's docs."""

from __future__ import annotations

import re
from typing import cast

import pytest
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.keyword import KeywordDetector
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.errors import InvalidInputError
from app.domain.memory import NewMemory
from app.domain.secrets.detectors import GUESS_HINTS, format_hint, own_patterns, plugins
from app.domain.secrets.find import find_secrets, redacted
from app.domain.secrets.screen import screen_memory
from bench import secret_corpus

CREDENTIALS = [*secret_corpus.positives(), *secret_corpus.held_out(), *secret_corpus.encoded()]


@pytest.mark.parametrize(("kind", "text"), CREDENTIALS, ids=[k for k, _ in CREDENTIALS])
def test_every_credential_is_found(kind: str, text: str) -> None:
    findings = find_secrets(text)
    assert findings, f"{kind} passed: {text!r}"
    # Redaction removes what was found: the text no longer holds a credential.
    assert not find_secrets(redacted(text, findings))


LOOK_ALIKES = secret_corpus.negatives()


@pytest.mark.parametrize(("kind", "text"), LOOK_ALIKES, ids=[k for k, _ in LOOK_ALIKES])
def test_no_look_alike_is_refused(kind: str, text: str) -> None:
    assert not find_secrets(text), f"{kind} refused: {text!r}"


@pytest.mark.parametrize(("kind", "content", "context"), secret_corpus.split())
def test_a_credential_cut_across_fields_is_found(kind: str, content: str, context: str) -> None:
    assert not find_secrets(content) and not find_secrets(context)
    with pytest.raises(InvalidInputError, match="cut in two") as refused:
        screen_memory(NewMemory(content, context=context), "refuse")
    assert refused.value.field == "content"
    kept = screen_memory(NewMemory(content, context=context), "redact")
    assert "[REDACTED:" in kept.content and "[REDACTED:" in (kept.context or "")
    assert not find_secrets(kept.content + (kept.context or ""))


def _any_case(word: str) -> st.SearchStrategy[str]:
    return st.lists(st.booleans(), min_size=len(word), max_size=len(word)).map(
        lambda upper: "".join(c.upper() if u else c for c, u in zip(word, upper, strict=True))
    )


# Lines shaped as code and config assign credentials (`db_password := "..."`), the word in
# any case, or replaced by one no pattern names.
KEYWORD_LINES = st.tuples(
    st.sampled_from(["", "my_", "self.", "DB_", "const ", "export ", "$"]),
    st.sampled_from(
        [
            "password",
            "api_key",
            "apikey",
            "db_pass",
            "secret",
            "contraseña",
            "pwd",
            "private_key",
            "token",
            "passphrase",
        ]
    ).flatmap(_any_case),
    st.sampled_from(["", "_prod", "s", "2"]),
    st.sampled_from(["=", " = ", ":=", ": ", "=>", " == ", "('", '["', " -> ", "="]),
    st.sampled_from(["'", '"', "`", ""]),
    st.sampled_from(["hunter2", "Xk9fQ2mZ", "s3cr3t_V4lue", "t0p-S3cret!", "abc"]),
    st.sampled_from(["'", '"', "`", ""]),
    st.sampled_from(["", ";", ")", "]", " # note", ","]),
).map("".join)


@given(KEYWORD_LINES)
@settings(max_examples=2000, deadline=None)
def test_the_keyword_hint_never_hides_what_the_keyword_detector_finds(line: str) -> None:
    # The hint is read instead of the detector's patterns on a line it does not match.
    detector = KeywordDetector()
    found = list(detector.analyze_string(line))
    assert not found or GUESS_HINTS[KeywordDetector].search(line), (line, found)


def test_the_format_hint_matches_every_line_a_format_pattern_matches() -> None:
    # Lines the hint does not match are passed over by the plugins it stands for.
    patterns = _format_patterns()
    lines = [
        line
        for seed in range(5)
        for _, text in secret_corpus.positives(seed) + secret_corpus.negatives(seed)
        for line in text.splitlines()
    ]
    matched = 0
    for line in lines:
        if any(regex.search(line) for regex in patterns):
            matched += 1
            assert format_hint().search(line), line
    assert matched > 100  # the corpus holds every format many times


def _format_patterns() -> list[re.Pattern[str]]:
    formats, _, _ = plugins()
    return [
        regex
        for plugin in formats
        if own_patterns(plugin)
        for regex in cast(RegexBasedDetector, plugin).denylist
    ]


@given(st.sampled_from(_format_patterns()).flatmap(lambda regex: st.from_regex(regex)))
@settings(max_examples=1500, deadline=None)
def test_the_format_hint_matches_what_any_format_pattern_matches(text: str) -> None:
    # Every pattern, each format in turn, written out by hypothesis from the pattern itself.
    for line in text.splitlines():
        if any(regex.search(line) for regex in _format_patterns()):
            assert format_hint().search(line), line
