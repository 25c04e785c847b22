"""The secret screen on the hand-written corpus (bench/secret_corpus.py): every credential
found, in its encoded forms and cut across a memory's fields too, and none of the
look-alikes refused. bench/secrets.py reports the same with LoCoMo and the project's docs."""

from __future__ import annotations

import pytest

from app.domain.errors import InvalidInputError
from app.domain.memory import NewMemory
from app.domain.secrets import find_secrets, redacted, screen_memory
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
