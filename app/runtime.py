"""What a running service holds: settings, database, embedder, telemetry."""

from __future__ import annotations

from dataclasses import dataclass

from app.config import Settings
from app.db.session import Database
from app.domain.validation import Limits
from app.embeddings.base import Embedder
from app.services.auth import Authenticator
from app.services.telemetry import Telemetry


@dataclass(slots=True)
class Runtime:
    settings: Settings
    database: Database
    embedder: Embedder
    telemetry: Telemetry
    schema_head: str
    authenticator: Authenticator

    @property
    def limits(self) -> Limits:
        s = self.settings
        return Limits(
            s.max_content_chars,
            s.max_tags,
            s.max_tag_chars,
            s.max_metadata_bytes,
            max_context_chars=s.max_context_chars,
        )
