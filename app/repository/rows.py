"""Mapping between memories rows and the domain type."""

from __future__ import annotations

from typing import Any

from app.domain.memory import Memory

# Whether a row still matches the hashes its writer stored: a row edited behind the API's
# back does not, and is never served to an agent (docs/security.md).
INTACT = (
    "(m.content_hash = memory_content_hash(m.content)"
    " AND m.context_hash IS NOT DISTINCT FROM memory_content_hash(m.context))"
)
# Served to agents: intact and not quarantined.
SERVABLE = f"(m.quarantined_at IS NULL AND {INTACT})"

# Every column a client may see; embeddings and search vectors never leave the database.
MEMORY_COLUMNS = f"""
    m.tenant_id, m.id, m.content, m.content_hash, m.memory_type, m.category, m.tags,
    m.source_repo, m.task_id, m.trust_level, m.confidence, m.pinned, m.source, m.name,
    m.metadata, m.context, m.observation_count, m.relevance_score, m.superseded_by, m.access_count,
    m.last_accessed_at, m.archived_at, m.created_at, m.updated_at, m.quarantined_at,
    m.created_by_key, m.version,
    (m.embedding IS NOT NULL) AS has_embedding,
    {INTACT} AS intact
"""


def to_memory(row: Any) -> Memory:
    return Memory(
        tenant_id=row["tenant_id"],
        id=row["id"],
        content=row["content"],
        content_hash=row["content_hash"],
        memory_type=row["memory_type"],
        category=row["category"],
        tags=list(row["tags"]),
        source_repo=row["source_repo"],
        task_id=row["task_id"],
        trust_level=row["trust_level"],
        confidence=row["confidence"],
        pinned=row["pinned"],
        source=row["source"],
        name=row["name"],
        metadata=row["metadata"],
        context=row["context"],
        observation_count=row["observation_count"],
        relevance_score=float(row["relevance_score"]),
        superseded_by=row["superseded_by"],
        access_count=row["access_count"],
        last_accessed_at=row["last_accessed_at"],
        archived_at=row["archived_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        quarantined_at=row["quarantined_at"],
        created_by_key=row["created_by_key"],
        version=row["version"],
        has_embedding=row["has_embedding"],
        intact=row["intact"],
    )
