"""Loaded by the schemathesis run (SCHEMATHESIS_HOOKS): the two input rules JSON Schema cannot
state are left out of the generated data. An identifier (a repository, a tag, a category, a
branch, a metadata key) must be written in one script (UTS #39, app/domain/scripts.py); a
random string of letters seldom is, and a pattern cannot say which script. A `since` or
`until` must name a time, in ISO 8601 or in words (app/domain/times.py), and since must
come before until; a random string seldom names one, and a pattern cannot say which words a
date parser reads. Those rules are held by tests/domain/test_hidden_text.py,
tests/domain/test_times.py and tests/contracts/test_input_rules.py instead."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import schemathesis

from app.domain.errors import InvalidInputError
from app.domain.scripts import mixes_scripts
from app.domain.times import time_window
from app.domain.validation import IDENTIFIER_FIELDS


def _a_window(value: Any) -> bool:
    if not isinstance(value, dict) or not ({"since", "until"} & set(value)):
        return True
    since, until = value.get("since"), value.get("until")
    if not all(v is None or isinstance(v, str) for v in (since, until)):
        return True  # a negative case of the schema's own: the server refuses it
    try:
        time_window(since, until, datetime.now(UTC))
    except InvalidInputError:
        return False
    return True


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
    return _one_script(body) and _a_window(body)


@schemathesis.hook
def filter_query(ctx: Any, query: Any) -> bool:
    return _one_script(query) and _a_window(query)
