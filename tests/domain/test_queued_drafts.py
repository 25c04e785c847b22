"""A queued draft's rules (app/domain/drafts.py): its evidence, screened for secrets as its
text is under either policy, and the finding its fingerprint names (the client's key when
it sent one, else the text)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from app.domain.drafts import HistoryDraftText, queued_draft
from app.domain.errors import InvalidInputError
from app.domain.secrets.screen import screen_fields
from tests.helpers.credentials import GITHUB_TOKEN

SENT = HistoryDraftText(
    kind="fix",
    text="`make test` failed with: E. It passed after changing a.py.",
    source_repo="acme/api",
    client="codex",
    client_session="s-1",
)


def with_(**changes: Any) -> HistoryDraftText:
    return replace(SENT, **changes)


def test_evidence_is_screened_as_the_text_is() -> None:
    leaked = queued_draft(with_(evidence={"error": f"bad credentials {GITHUB_TOKEN}"}))
    with pytest.raises(InvalidInputError) as refused:
        screen_fields(leaked, "refuse")
    assert refused.value.field == "evidence.error" and GITHUB_TOKEN not in str(refused.value)
    redacted = screen_fields(leaked, "redact")
    assert redacted.evidence == {"error": "bad credentials [REDACTED:GitHub Token]"}
    as_text = screen_fields(queued_draft(with_(text=f"bad credentials {GITHUB_TOKEN}")), "redact")
    assert as_text.text == redacted.evidence["error"]


def test_evidence_comes_in_its_own_order() -> None:
    draft = queued_draft(with_(evidence={"command": "make test", "error": "E", "said": None}))
    assert list(draft.evidence) == ["error", "command"]


def test_the_fingerprint_is_of_the_key_when_one_is_sent() -> None:
    keyed = queued_draft(with_(key="fix:make test:E"))
    reworded = queued_draft(with_(key="fix:make test:E", text="`make test` fails on E."))
    assert keyed.fingerprint == reworded.fingerprint
    assert keyed.fingerprint != queued_draft(with_(key="fix:make lint:E")).fingerprint
    other_kind = queued_draft(with_(key="fix:make test:E", kind="convention"))
    assert keyed.fingerprint != other_kind.fingerprint
    # A key never names the same finding as a text, even one spelled like it.
    plain = queued_draft(SENT)
    assert plain.fingerprint != queued_draft(with_(key=SENT.text)).fingerprint
    assert plain.fingerprint == queued_draft(with_(client_session="s-2")).fingerprint
