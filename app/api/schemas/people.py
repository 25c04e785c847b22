"""The body of /people."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from app.api.examples import body
from app.api.rules import line_rules
from app.api.schemas.body import Body


class PersonIn(Body):
    model_config = ConfigDict(json_schema_extra=body({"name": "alice"}))

    name: str = Field(json_schema_extra=line_rules("person", required=True))
