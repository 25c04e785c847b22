"""What every request body is: strict JSON, unknown fields refused; and JSON Schema's
integer."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict


def _json_integer(value: Any) -> Any:
    """JSON Schema's integer: a number with no fraction (2.0 is 2); never a boolean."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An integer as JSON Schema has it (the models are strict: "2" and true stay refused).
JsonInt = Annotated[int, BeforeValidator(_json_integer)]


class Body(BaseModel):
    # Strict: a boolean is a JSON boolean and a number a JSON number; "1" or 0 for true is
    # refused, not guessed (`{"dry_run": 0}` must not run a real prune). An unknown field is
    # refused. Every request body inherits both (a subclass's model_config adds to them).
    model_config = ConfigDict(extra="forbid", strict=True)
