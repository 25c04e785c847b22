"""A nested object a door passed on as a plain mapping (MCP's arguments), read as the
input it stands for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, fields
from typing import Any, TypeVar

from app.domain.errors import InvalidInputError
from app.domain.validation import forbid_unknown

D = TypeVar("D")


def from_mapping(cls: type[D], value: Any, field: str) -> D:
    """A nested object a door passed on as a plain mapping (MCP arguments), as `cls`:
    unknown keys refused like unknown fields, missing required ones named."""
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{field} must be an object", field=field)
    known = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    forbid_unknown(value, known, field)
    required = [
        f.name
        for f in fields(cls)  # type: ignore[arg-type]
        if f.default is MISSING and f.default_factory is MISSING
    ]
    missing = [name for name in required if name not in value]
    if missing:
        raise InvalidInputError(f"{field} needs {', '.join(missing)}", field=field)
    return cls(**value)
