"""The hybrid search as one statement, built in named stages, bound by name.

    term reads    the query's terms, and each one's hits (or, a common term, its frequency)
    term weights  the scope's size (N), each term's document frequency, IDF and budget
    vector        the nearest by cosine distance (HNSW with iterative scan, or exact)
    keyword       the candidates the budget drew (rarest term first), BM25 over them
    fuse          both sides joined, weighted by alpha, decayed, floored, integrity-checked
    effects       quarantine marks for altered rows found on the way, and what is returned
                  counted as read
    output        the rows, and one row of counts even when nothing is returned

Each stage is a list of CTEs; `SearchStatement.sql` is the statement to paste into psql
(`agent-memory explain-search` prints it with its values and its plan).

One statement for both back ends. On one PostgreSQL it runs as written; on Citus the
tenant's worker runs it against the tenant's shards (`worker_call`: the tables renamed,
memory_search_on_worker()). Either way it is planned once per connection: the parts whose
plan depends on the values are planned inside its two readers on every call, and they and
the corpus size read the table the tenant's rows are in, which memory_home() names
(memories, or on a worker the tenant's shard). So each rule is written once: the common
terms in memory_keyword_postings(), the exact-or-graph choice and its scope sizing in
memory_nearest() (app/repository/nearest.py), the corpus size here.

Keyword side: its stages are app/repository/search_keyword.py's, where their rules are
written.

Vector side: the `candidates` nearest by cosine distance, through HNSW with pgvector's
iterative scan (so filtered queries still fill up), or, for a scope small beside the graph,
by an exact read of the scope's vectors from one range of an index:
memory_vector_candidates() reads them through memory_nearest(), the one read of the nearest
within a scope, which chooses on every call, on the search's own values (a repository's
count and exact read on one PostgreSQL are static statements whose plans the connection
keeps; every other read is planned on the call: docs/search.md).

similarity = alpha * vector_similarity + (1 - alpha) * keyword_score; either side missing
contributes 0. retention = e^(-t / (strength_days * (1 + access_count))), 1 for pinned
(tests/services/forgetting_curve.py is its reference); decayed_score = similarity *
retention; score = similarity * ((1 - decay_weight) + decay_weight * retention) *
relevance_score, where relevance_score (default 1) is what agents' feedback made of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from app.domain.filters import MemoryFilter
from app.repository.filters import filter_value
from app.repository.rows import INTACT, MARK_QUARANTINED, QUARANTINED, memory_columns
from app.repository.search_keyword import keyword, term_reads, term_weights
from app.repository.sql import named, psql_script, sql_literal, sql_text

# A returned memory's access counts, as the ranking read them (the search's own count,
# `counted`, is added to them in the output).
RANKED_ACCESS = {"access_count": "r.access_count", "last_accessed_at": "r.last_accessed_at"}


@dataclass(frozen=True, slots=True)
class SearchParams:
    query: str
    embedding: Sequence[float] | None
    alpha: float
    limit: int
    candidates: int
    term_cap: int
    decay_weight: float
    strength_days: float
    track_access: bool
    # The relevance floor (bench/floor.py replays it offline): a result scoring below
    # floor_ratio * the best score, or whose similarity is below floor_min, is left out
    # before accesses are counted.
    # 0 and 0: no floor.
    floor_ratio: float = 0.0
    floor_min: float = 0.0
    # Memories written on this branch score `branch_boost` times higher (None: no branch).
    git_branch: str | None = None
    branch_boost: float = 1.0

    @property
    def uses_vectors(self) -> bool:
        return self.alpha > 0 and self.embedding is not None


@dataclass
class SearchStatement:
    """The statement with `:name` placeholders, and the values for them. `distributed`: a
    Citus statement, which the tenant's worker runs (worker_call)."""

    sql: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    distributed: bool = False

    def bind(self, value: Any, name: str | None = None) -> str:
        """A placeholder for `value`: `name`, or the next `:filter_n`."""
        name = name or f"filter_{len(self.values)}"
        self.values[name] = value
        return f":{name}"

    def compiled(self) -> tuple[str, list[Any]]:
        """As asyncpg takes it: `$n` placeholders and the values in their order."""
        text, *args = named(self.sql, self.values)
        return text, args

    def worker_call(self, explain: bool = False) -> tuple[str, dict[str, Any]]:
        """Citus: the call that runs the statement on the tenant's worker, and its values
        (memory_search_on_worker(): the statement's tables as `{memories}` and
        `{memory_access}`, which the worker names as the tenant's shards; its rows answered
        as one jsonb array, in their order; each value as the text its type reads)."""
        text, *args = named(self.sql, self.values)
        values = [sql_text(value) for value in args]
        tenant = self.values["tenant_id"]
        return _ON_WORKER, {
            "tenant_id": tenant, "statement": _on_shards(text), "values": values,
            "explain": explain,
        }  # fmt: skip

    def psql(self) -> str:
        """As psql runs it: a `\\set` per value, then the statement as written; on Citus,
        the call to the tenant's worker, in a transaction of the tenant's."""
        if not self.distributed:
            return psql_script(self.sql, self.values)
        call, values = self.worker_call()
        return "\n".join(
            [
                "BEGIN;",
                "SET LOCAL citus.propagate_set_commands = 'local';",
                f"SET LOCAL app.tenant_id = {sql_literal(values['tenant_id'])};",
                psql_script(call, values),
                "ROLLBACK;",
            ]
        )


# Citus: the statement, on the tenant's worker (a call Citus delegates there, migration 0036).
_ON_WORKER = "SELECT memory_search_on_worker(:tenant_id, :statement, :values, :explain)"
# The output's order, by its columns' names (the counts' row, all NULL, first when nothing
# is returned).
RESULT_ORDER = "score DESC, id"
# A table the search statement reads or writes (worker_call: the shard's name instead).
_TABLE = re.compile(r"\b(FROM|JOIN|UPDATE|INTO)\s+(memories|memory_access)\b")


@lru_cache(maxsize=512)
def _on_shards(text: str) -> str:
    """The statement as the worker prepares it (a few shapes, each rewritten once)."""
    stages, select = _TABLE.sub(r"\1 {\2}", text).rsplit("\nSELECT ", 1)
    return (
        f"{stages},\noutput AS (\nSELECT {select.rstrip()}\n)\n"
        f"SELECT coalesce(jsonb_agg(o ORDER BY {RESULT_ORDER}), '[]') FROM output o"
    )


def _vector(filters: str) -> list[str]:
    return [
        """vector_budget AS (
    -- The vector side's rows: none when alpha is 0, there is no query vector, or the
    -- stored vectors are another model's.
    SELECT :candidates::integer * (SELECT fits FROM model_check)::integer AS n
)""",
        f"""vec AS (
    -- Planned on each call for its own values: HNSW, or an exact read of a scope small
    -- beside the graph (memory_vector_candidates()).
    SELECT v.* FROM memory_vector_candidates(
        :embedding::vector, (SELECT n FROM vector_budget), (SELECT tsq FROM all_terms),
        :tenant_id, {filters}) v
    WHERE (SELECT n FROM vector_budget) > 0
)""",
    ]


def _fuse() -> list[str]:
    return [
        """fused AS MATERIALIZED (
    -- MATERIALIZED: its id is then a column, which the access lookup below can take to
    -- the index; as the full join's coalesce() it was only a filter on the tenant's rows.
    SELECT coalesce(kw.id, vec.id) AS id,
           coalesce(vec.vector_similarity, 0) AS vector_similarity,
           coalesce(kw.keyword_score, 0) AS keyword_score,
           coalesce(kw.pinned, vec.pinned) AS pinned,
           coalesce(kw.relevance_score, vec.relevance_score)::float8 AS relevance,
           coalesce(kw.created_at, vec.created_at) AS created_at
    FROM kw FULL OUTER JOIN vec ON kw.id = vec.id
)""",
        """scored AS (
    SELECT f.id, f.vector_similarity, f.keyword_score, f.relevance,
           coalesce(a.access_count, 0) AS access_count, a.last_accessed_at,
           :alpha::float8 * f.vector_similarity + (1 - :alpha::float8) * f.keyword_score
               AS similarity,
           CASE WHEN f.pinned THEN 1.0::float8 ELSE exp(
               -greatest(extract(epoch FROM now() - coalesce(a.last_accessed_at, f.created_at)), 0)
               / 86400.0 / (:strength_days::float8 * (1 + coalesce(a.access_count, 0)))) END
               AS retention
    FROM fused f
    -- Access counts live beside the memories (migration 0030): a memory never read has
    -- none. One index probe per candidate, whatever the plan's estimate of either side;
    -- the output takes them from here.
    LEFT JOIN LATERAL (
        SELECT a.access_count, a.last_accessed_at FROM memory_access a
        WHERE a.tenant_id = :tenant_id AND a.memory_id = f.id
        LIMIT 1
    ) a ON true
)""",
        """top AS (
    SELECT s.id, s.vector_similarity, s.keyword_score, s.similarity, s.access_count,
           s.last_accessed_at, s.similarity * s.retention AS decayed_score,
           s.similarity * ((1 - :decay_weight::float8) + :decay_weight::float8 * s.retention)
               * s.relevance AS score
    FROM scored s
    WHERE s.similarity > 0
    ORDER BY score DESC, s.id
    LIMIT 2 * :limit
)""",
        f"""checked AS (
    -- A quarantined row, or one edited behind the API's back (it no longer matches its
    -- hash), is never served. Checked here, on the few rows that could be returned, not
    -- on every candidate.
    -- The current branch's memories rank a little higher (none is left out).
    SELECT t.id, t.vector_similarity, t.keyword_score, t.similarity, t.decayed_score,
           t.access_count, t.last_accessed_at,
           t.score * CASE WHEN m.git_branch = :git_branch THEN :branch_boost::float8
                          ELSE 1 END AS score,
           NOT {QUARANTINED} AS unmarked, {INTACT} AS intact
    FROM top t JOIN memories m ON m.tenant_id = :tenant_id AND m.id = t.id
)""",
        """limited AS (
    SELECT * FROM checked WHERE intact AND unmarked ORDER BY score DESC, id LIMIT :limit
)""",
        """ranked AS (
    -- The relevance floor, before anything below it is counted as accessed: a result
    -- scoring below floor_ratio of the best, or matching the query below floor_min
    -- (its similarity, whatever its age: "nothing here is about this").
    SELECT l.* FROM limited l
    WHERE l.score >= :floor_ratio::float8 * (SELECT max(score) FROM limited)
      AND l.similarity >= :floor_min::float8
)""",
    ]


def _effects() -> list[str]:
    """Writes, in the same round trip as the read that decides them: quarantine marks, and
    what is returned counted as read. (On Citus the tenant's worker plans this statement,
    never the coordinator, which crashed on an INSERT among the CTEs of a statement it
    routed: docs/scale-out.md.)"""
    return [
        f"""quarantined AS (
    -- An altered row found on the way is marked, so /stats counts it and the audit
    -- trail records it (app/services/search.py).
    UPDATE memories m SET {MARK_QUARANTINED}
    FROM checked c
    WHERE NOT c.intact AND c.unmarked AND m.tenant_id = :tenant_id AND m.id = c.id
    RETURNING m.id
)""",
        """relaxed_commit AS (
    -- Access counts are statistics, not data: the search's commit need not wait for the
    -- WAL flush (a crash may lose the last moments of counts, never a memory).
    SELECT set_config('synchronous_commit', 'off', true) AS setting
)""",
        f"""counted AS (
{counted_reads("ARRAY(SELECT r.id FROM ranked r WHERE :track_access)")}
)""",
    ]


def counted_reads(ids: str) -> str:
    """The reads of the memories `ids` (SQL of a uuid[]) counted beside them (migration
    0030), never in their rows, answering each one's counts. A memory deleted since it was
    read is skipped; the ones counted are kept from deletion (KEY SHARE) until the
    transaction commits. In id order: concurrent searches counting the same memories in
    other orders would otherwise deadlock on their access rows."""
    return f"""INSERT INTO memory_access AS a (tenant_id, memory_id, access_count, last_accessed_at)
SELECT m.tenant_id, m.id, 1, now() FROM memories m
WHERE m.tenant_id = :tenant_id AND m.id = ANY ({ids})
ORDER BY m.id
FOR KEY SHARE
ON CONFLICT (tenant_id, memory_id) DO UPDATE
    SET access_count = a.access_count + 1, last_accessed_at = EXCLUDED.last_accessed_at
RETURNING a.memory_id, a.access_count, a.last_accessed_at"""


def _counts() -> list[str]:
    return [
        """counts AS (
    -- One row even when nothing is returned, so that the counts always come back.
    SELECT (SELECT count(*) FROM kw) AS keyword_candidates,
           (SELECT count(*) FROM vec) AS vector_candidates,
           (SELECT fits FROM model_check) AS vectors_fit,
           (SELECT count(*) FROM limited) - (SELECT count(*) FROM ranked) AS below_floor,
           ARRAY(SELECT id FROM quarantined) AS quarantined_ids
)"""
    ]


# What is returned: the ranked rows with the access counts as this search left them (as the
# ranking read them when uncounted), and the counts; each row's integrity as `checked` found
# it (hashing a row's text is a fair share of the statement: not twice).
_RETURNED = {name: f"coalesce(c.{name}, {expr})" for name, expr in RANKED_ACCESS.items()}
_RETURNED["intact"] = "r.intact"
_OUTPUT = f"""SELECT {memory_columns(_RETURNED)},
       r.score, r.similarity, r.vector_similarity, r.keyword_score, r.decayed_score,
       n.keyword_candidates, n.vector_candidates, n.vectors_fit, n.below_floor,
       n.quarantined_ids
FROM counts n
CROSS JOIN relaxed_commit
LEFT JOIN (ranked r JOIN memories m ON m.tenant_id = :tenant_id AND m.id = r.id) ON true
LEFT JOIN counted c ON c.memory_id = r.id
ORDER BY {RESULT_ORDER}"""


def search_statement(
    tenant_id: str,
    f: MemoryFilter,
    p: SearchParams,
    distributed: bool = False,
    model: str | None = None,
) -> SearchStatement:
    """The statement and its values; `model` is the query vector's (a server still on the
    model a re-embed replaced searches by keyword only: migration 0019)."""
    s = SearchStatement(distributed=distributed)
    for name, value in (
        ("tenant_id", tenant_id),
        ("query", p.query),
        ("embedding", p.embedding),
        ("alpha", p.alpha),
        ("term_cap", p.term_cap),
        ("candidates", p.candidates if p.uses_vectors else 0),
        ("limit", p.limit),
        ("decay_weight", p.decay_weight),
        ("strength_days", p.strength_days),
        ("floor_ratio", p.floor_ratio),
        ("floor_min", p.floor_min),
        ("git_branch", p.git_branch),
        ("branch_boost", p.branch_boost),
        ("track_access", p.track_access),
    ):
        s.bind(value, name)
    # The filter as the one SQL value both readers take (memory_filter).
    filters = filter_value(f, s.bind)
    # Re-embedding is for one PostgreSQL (docs/operations.md): a worker is not asked.
    s.bind(None if distributed else model, "model")
    stages = [
        # Whether the query vector's model is the stored vectors' (only a server left on
        # the model a re-embed replaced gets false: it then searches by keyword alone).
        # Asked once, read three times.
        "model_check AS (SELECT memory_vector_fits(:model::text) AS fits)",
        *term_reads(filters, p, s),
        *term_weights(f, s),
        *_vector(filters),  # before the keyword scores: they may draw on its rows
        *keyword(p),
        *_fuse(),
        *_effects(),
        *_counts(),
    ]
    body = ",\n".join(stages)
    s.sql = f"WITH {body}\n{_OUTPUT}\n"
    return s
