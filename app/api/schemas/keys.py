"""The body of /keys."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from app.api.examples import body
from app.api.rules import documented, line_rules
from app.api.schemas.body import Body
from app.domain.keys import ROLES


class KeyIn(Body):
    model_config = ConfigDict(json_schema_extra=body({"name": "ci-bot", "role": "agent"}))

    name: str = Field(json_schema_extra=line_rules("key_name", required=True))
    role: str = Field(json_schema_extra=documented(choices=ROLES))
    person: str | None = Field(
        default=None,
        description="The person the key acts for, by name (made on first use): their"
        " personal memories reach it, and what it writes names them. None: a key of no one.",
        json_schema_extra=line_rules("person"),
    )
