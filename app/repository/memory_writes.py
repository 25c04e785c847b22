"""The statements that store a memory or reinforce the one it repeats (MemoryRepository's
writes, and the import's: app/repository/transfer.py)."""

from __future__ import annotations

from app.repository.rows import (
    CLIENT_COLUMNS,
    CLIENT_VALUES,
    DEDUP_KEY,
    SERVABLE,
    WRITER_COLUMNS,
    WRITER_VALUES,
    returning_memories,
)

# One statement per memory: a new row, or (same tenant, repo and normalised content)
# the existing row reinforced. ON CONFLICT makes this atomic under concurrency. Its SET
# calls immutable functions only, as Citus requires there: the time is the proposed
# row's default, now().
# Reinforcing keeps the original confidence and trust and counts the observation. Only a
# caller who may write the stored row's trust level (:writable) also merges its tags (order
# kept, no duplicates), moves its version, and brings it back from the forgetting curve's
# archive, since it was just observed again: an agent re-storing a person's or the
# operator's memory changes nothing else (an admin's undo still finds the version it left),
# and no re-store undoes an admin's archive. A quarantined or altered row is never
# reinforced: the write finds no row, and the service refuses it.
# (A function, not a subquery: Citus routes no INSERT with a subquery.)
MERGED_TAGS = "memory_merged_tags(m.tags, {incoming})"
MAY_CHANGE = "m.trust_level = ANY(:writable::text[])"
VECTOR_IF_FITS = "memory_vector_if_fits(:embedding, :embedding_model)"
_REVIVES = f"({MAY_CHANGE} AND NOT m.archived_by_admin)"
# Observed again at a commit, by a writer who may change it: where it was seen last (what
# it names of its code only when it names anything), and no longer possibly stale.
_OBSERVED_AT = f"""git_branch = CASE WHEN {MAY_CHANGE} THEN coalesce({{new}}, m.git_branch)
                      ELSE m.git_branch END,
    git_commit = CASE WHEN {MAY_CHANGE} THEN coalesce({{commit}}, m.git_commit)
                      ELSE m.git_commit END,
    files = CASE WHEN {MAY_CHANGE} AND cardinality({{files}}) > 0 THEN {{files}}
                 ELSE m.files END,
    stale_since = CASE WHEN {MAY_CHANGE} THEN NULL ELSE m.stale_since END,
    stale_reason = CASE WHEN {MAY_CHANGE} THEN NULL ELSE m.stale_reason END"""

# Known content stored again: one more observation (a store, a batch, an import).
OBSERVED_AGAIN = "observation_count = m.observation_count + 1"

UPSERT = returning_memories(
    f"""
INSERT INTO memories AS m (
    tenant_id, {CLIENT_COLUMNS}, content_hash, embedding, {WRITER_COLUMNS}, context_hash,
    held_at, provenance
)
VALUES (
    :tenant_id, {CLIENT_VALUES}, memory_content_hash(:content),
    {VECTOR_IF_FITS}, {WRITER_VALUES},
    memory_content_hash(:context),
    :held_at, :provenance
)
ON CONFLICT {DEDUP_KEY} DO UPDATE SET
    {OBSERVED_AGAIN},
    tags = CASE WHEN {MAY_CHANGE} THEN {MERGED_TAGS.format(incoming="EXCLUDED.tags")}
                ELSE m.tags END,
    embedding = coalesce(m.embedding, EXCLUDED.embedding),
    archived_at = CASE WHEN {_REVIVES} THEN NULL ELSE m.archived_at END,
    {
        _OBSERVED_AT.format(
            new="EXCLUDED.git_branch", commit="EXCLUDED.git_commit", files="EXCLUDED.files"
        )
    },
    version = CASE WHEN {MAY_CHANGE} THEN m.version + 1 ELSE m.version END,
    updated_at = CASE WHEN {MAY_CHANGE} THEN EXCLUDED.updated_at ELSE m.updated_at END
WHERE {SERVABLE}""",
    inserted="(m.xmax = 0)",
)


# The same reinforcement for a memory already stored with its embedding, so that observing
# it again needs no model call. A miss (new, or still pending an embedding) returns nothing
# and goes through UPSERT. The dedup key leads with content_hash: an index search whether
# or not there is a repository (`IS NOT DISTINCT FROM` matches its NULLS NOT DISTINCT).
def _reinforce(which: str) -> str:
    """The reinforcement of the stored memory `which` selects (a WHERE on m)."""
    return returning_memories(
        f"""
UPDATE memories AS m SET
    {OBSERVED_AGAIN},
    tags = CASE WHEN {MAY_CHANGE} THEN {MERGED_TAGS.format(incoming=":tags::text[]")}
                ELSE m.tags END,
    archived_at = CASE WHEN {_REVIVES} THEN NULL ELSE m.archived_at END,
    {
            _OBSERVED_AT.format(
                new=":git_branch::text", commit=":git_commit::text", files=":files::text[]"
            )
        },
    version = CASE WHEN {MAY_CHANGE} THEN m.version + 1 ELSE m.version END,
    updated_at = CASE WHEN {MAY_CHANGE} THEN :now ELSE m.updated_at END
WHERE m.tenant_id = :tenant_id AND {which} AND {SERVABLE}"""
    )


# The dedup key's row (DEDUP_KEY): of the reader the writer asks for, the team's or their
# own (row security shows no other person's).
_KNOWN = (
    "m.content_hash = memory_content_hash({content})"
    " AND m.source_repo IS NOT DISTINCT FROM {source_repo} AND m.personal = {personal}"
    " AND m.embedding IS NOT NULL"
)
REINFORCE = _reinforce(
    _KNOWN.format(content=":content", source_repo=":source_repo", personal=":personal")
)
# Which of a batch's memories REINFORCE would find, in one statement: most of a batch is
# new, and each of those would otherwise cost an UPDATE that finds nothing. Each through
# the dedup key, and only the row found is checked whole (LATERAL ... LIMIT 1): as a join,
# under row-level security, the plan hashed every row of the tenant for the integrity
# check first (docs/benchmarks.md, "Where a write's time goes").
STORED_EMBEDDED = f"""
SELECT n.ord
FROM unnest(:contents::text[], :source_repos::text[], :personals::boolean[])
     WITH ORDINALITY AS n(content, source_repo, personal, ord)
CROSS JOIN LATERAL (
    SELECT m.* FROM memories m
    WHERE m.tenant_id = :tenant_id
      AND {_KNOWN.format(content="n.content", source_repo="n.source_repo", personal="n.personal")}
    LIMIT 1
) m
WHERE {SERVABLE}"""
# A near-duplicate (app/domain/duplicates.py) reinforces the memory it nearly repeats.
REINFORCE_ID = _reinforce("m.id = :memory_id")
