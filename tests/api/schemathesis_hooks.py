"""Loaded by the schemathesis run (SCHEMATHESIS_HOOKS): the one input rule JSON Schema cannot
state is left out of the generated data. An identifier (a repository, a tag, a category, a
branch, a metadata key) must be written in one script (UTS #39, app/domain/scripts.py); a
random string of letters seldom is, and a pattern cannot say which script. That rule is held
by tests/domain/test_hidden_text.py and tests/contracts/test_input_rules.py instead."""

from __future__ import annotations

from typing import Any

import schemathesis

from app.domain.scripts import mixes_scripts
from app.domain.validation import IDENTIFIER_FIELDS


def _one_script(value: Any, key: str | None = None) -> bool:
    if isinstance(value, dict):
        return all(
            (key != "metadata" or not mixes_scripts(str(name)))
            and _one_script(item, str(name) if key != "metadata" else "metadata")
            for name, item in value.items()
        )
    if isinstance(value, list):
        return all(_one_script(item, key) for item in value)
    if isinstance(value, str) and key in IDENTIFIER_FIELDS:
        return not mixes_scripts(value)
    return True


@schemathesis.hook
def filter_body(ctx: Any, body: Any) -> bool:
    return _one_script(body)


@schemathesis.hook
def filter_query(ctx: Any, query: Any) -> bool:
    return _one_script(query)
