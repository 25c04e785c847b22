"""Hybrid search: keyword (BM25-weighted full text) and vector (HNSW cosine) candidates,
fused, filtered, decayed, ranked and access-counted in ONE statement.

Keyword side. The query's lexemes (english stemming, stop words dropped) are matched
any-term, not all-terms: conversational questions rarely contain every word of the
memory they are after. A term that ANALYZE's statistics call common (more than
5 x `term_cap` rows) takes its document frequency from those statistics and its
posting list is never read: a GIN bitmap scan costs in proportion to the rows it
matches. Every other term's matching rows are read once, at most `term_cap` of them,
which gives its document frequency in the query's scope and its candidates. IDF,
ln(1 + (N - df + 0.5) / (df + 0.5)), makes rare words (identifiers, error codes) count
for more than common ones. Candidates are drawn term by term, rarest first, from a
shared budget of `term_cap` rows. When only common terms match, the candidates are the
rows holding all of them among the vector side's candidates (a keyword-only search
takes the first `term_cap` of them from the index instead). The work per query is
bounded however many rows match a common word. Each candidate scores
sum(idf(t) * tf(t, d)) with tf the field-weighted single-term ts_rank (content A 1.0,
category B 0.4, tags C 0.4, context and the words inside camelCase identifiers D 0.2)
saturated BM25-style against document length; an exact phrase match (identifier or
error string) doubles the score. keyword_score is (score / best candidate's score)^2:
0..1 within the query, 1 for the best. The square keeps a weak keyword match from
outvoting a strong vector match (docs/search.md).

Vector side: the `candidates` nearest by cosine distance through HNSW with pgvector's
iterative scan (set per connection), so filtered queries still fill up; the planner
takes an exact scan through a b-tree when the filter is selective enough, judged on the
search's own values: memory_vector_candidates() plans that query on every call, while the
statement around it, whose plan does not depend on the values, is planned once per
connection (see SearchRepository.search).

similarity = alpha * vector_similarity + (1 - alpha) * keyword_score; either side
missing contributes 0. retention = e^(-t / (strength_days * (1 + access_count))), 1 for
pinned (tests/services/forgetting_curve.py is its reference);
decayed_score = similarity * retention;
score = similarity * ((1 - decay_weight) + decay_weight * retention) * relevance_score,
where relevance_score (default 1) is what agents' feedback has made of the memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import asyncpg

from app.db.unit_of_work import UnitOfWork
from app.domain.errors import SearchTimeoutError
from app.domain.filters import MemoryFilter
from app.domain.memory import Memory
from app.repository.filters import filter_sql, function_args, is_narrowed
from app.repository.rows import INTACT, memory_columns, to_memory

# Tuned on the LoCoMo dev split (bench/locomo_retrieval.py): short memories want a
# low k1 (one mention is most of the evidence) and little length normalisation.
BM25_K1 = 0.6
BM25_B = 0.3
# ts_rank's weights, in its order D, C, B, A. Context (D) at a fifth of the content: a
# memory is found through the situation it came from, but its own words rank first
# (LoCoMo, context weight 0.1 / 0.2 / 0.4 / 0.7: hybrid R@10 0.740 / 0.743 / 0.739 / 0.733).
FIELD_WEIGHTS = "{0.2, 0.4, 0.4, 1.0}"
# A returned memory's access counters as this search left them.
TOUCHED = {
    "access_count": "coalesce(t.access_count, m.access_count)",
    "last_accessed_at": "coalesce(t.last_accessed_at, m.last_accessed_at)",
}


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
    # max(floor_min, floor_ratio * best) is left out before accesses are counted.
    # 0 and 0: no floor.
    floor_ratio: float = 0.0
    floor_min: float = 0.0


@dataclass(frozen=True, slots=True)
class SearchHit:
    memory: Memory
    score: float
    similarity: float
    vector_similarity: float
    keyword_score: float
    decayed_score: float


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    hits: list[SearchHit]
    keyword_candidates: int
    vector_candidates: int
    below_floor: int = 0
    vectors_fit: bool = True  # false: the stored vectors are another model's
    # Rows this search found altered behind the API's back, and marked quarantined.
    quarantined: list[UUID] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _IndexReaders:
    """How the statement reads the indexes: a term's keyword hits (given the tsquery's SQL),
    the vector side's candidates, and each query term's class (common or not)."""

    keyword_hits: Callable[[str], str]
    vector_candidates: str
    term_class: str


def _through_functions(
    f: MemoryFilter, bind: Callable[[Any], str], embedding: str, cap: str, vec_limit: str
) -> _IndexReaders:
    """One PostgreSQL: memory_keyword_hits() reads the GIN index with owner rights (row-level
    security would forbid it) and enforces the tenant itself; memory_vector_candidates()
    plans its query for these values; ANALYZE's statistics class the terms."""
    filters = function_args(f, bind)
    return _IndexReaders(
        keyword_hits=lambda tsq: (
            f"SELECT k.hit FROM memory_keyword_hits({tsq}, {cap}, {filters}) k"
        ),
        vector_candidates=f"""SELECT v.* FROM memory_vector_candidates(
        {embedding}::vector, {vec_limit}, (SELECT tsq FROM all_terms), $1, {filters}) v""",
        term_class=f"""-- ANALYZE's most-common-lexeme frequencies: a term matching more
    -- than 5 x term_cap rows of the table is "common". Its document frequency comes from
    -- the statistics and its posting list is never read, so no query pays for a word
    -- every row has.
    SELECT qt.lexeme, qt.tsq, s.freq,
           coalesce(s.freq * (SELECT reltuples FROM pg_class
                               WHERE oid = 'memories'::regclass), 0) > 5 * {cap} AS common
    FROM query_terms qt
    LEFT JOIN memory_common_lexemes(ARRAY(SELECT lexeme FROM query_terms)) s USING (lexeme)""",
    )


def _written_out(
    f: MemoryFilter, bind: Callable[[Any], str], embedding: str, cap: str, vec_limit: str
) -> _IndexReaders:
    """Citus: the statement runs whole on the worker holding the tenant's shard, where a
    function that reads the table cannot run (it would be a distributed query inside a
    shard's): the readers are written out, filtered by the tenant like any other query,
    and the worker plans them for their values (Citus sends them as constants). Under
    row-level security the keyword side reads the tenant's rows through the b-tree, not
    the GIN index; and the statistics are per shard, on the workers, so no term is taken
    as common: each is read, still at most term_cap rows (docs/scale-out.md)."""
    scope = filter_sql(f, bind)
    return _IndexReaders(
        keyword_hits=lambda tsq: (
            f"SELECT m.id AS hit FROM memories m"
            f" WHERE {scope} AND m.search_vector @@ {tsq} LIMIT {cap}"
        ),
        vector_candidates=f"""SELECT m.id, m.pinned, m.last_accessed_at, m.created_at,
               m.access_count, m.relevance_score,
               greatest(0, 1 - (m.embedding <=> {embedding}::vector))::float8
                   AS vector_similarity,
               m.search_vector @@ (SELECT tsq FROM all_terms) AS holds_all_terms
        FROM memories m
        WHERE {scope} AND m.embedding IS NOT NULL
        ORDER BY m.embedding <=> {embedding}::vector
        LIMIT {vec_limit}""",
        term_class="SELECT qt.lexeme, qt.tsq, NULL::real AS freq, false AS common"
        " FROM query_terms qt",
    )


def build_search_sql(
    f: MemoryFilter, p: SearchParams, distributed: bool = False, model: str | None = None
) -> tuple[str, list[Any]]:
    """The statement and its arguments; `model` is the query vector's (a server still on
    the model a re-embed replaced searches by keyword only: migration 0019)."""
    args: list[Any] = []

    def bind(value: Any) -> str:
        args.append(value)
        return f"${len(args)}"

    bind(None)  # $1 is the tenant, filled by the caller
    q = bind(p.query)
    embedding = bind(p.embedding)
    alpha = bind(p.alpha)
    cap = bind(p.term_cap)
    vec_limit = bind(p.candidates if p.alpha > 0 and p.embedding is not None else 0)
    # Whether the query vector's model is the stored vectors' (only a server left on the
    # model a re-embed replaced gets false: it then searches by keyword alone). Re-embedding
    # is for one PostgreSQL (docs/operations.md).
    if distributed:
        fits, model_check = "true", ""
    else:  # asked once, read three times
        fits = "(SELECT fits FROM model_check)"
        model_check = f"model_check AS (SELECT memory_vector_fits({bind(model)}::text) AS fits),"
    vec_limit = f"({vec_limit}::integer * {fits}::integer)"
    limit = bind(p.limit)
    decay_w = bind(p.decay_weight)
    strength = bind(p.strength_days)
    track = bind(p.track_access)
    floor_ratio = bind(p.floor_ratio)
    floor_min = bind(p.floor_min)
    kw_on = "true" if p.alpha < 1 else "false"
    readers = (_written_out if distributed else _through_functions)(
        f, bind, embedding, cap, vec_limit
    )
    # Rows holding every one of several common terms: reading the GIN index for them
    # would read each term's whole posting list, a cost that grows with the rows that
    # match. So they are looked for among the vector side's candidates; only a
    # keyword-only search reads the index (bounded by term_cap rows, not in cost).
    if p.alpha > 0 and p.embedding is not None:
        all_terms_hits = "(SELECT v.id FROM vec v WHERE v.holds_all_terms)"
    else:
        all_terms_hits = (
            "(SELECT k.hit FROM all_terms a"
            f" CROSS JOIN LATERAL ({readers.keyword_hits('a.tsq')}) k WHERE a.tsq IS NOT NULL)"
        )
    # N for IDF: the size of the filtered scope (counted, capped) when the query is
    # filtered or the table distributed (a worker's catalog knows nothing of its size);
    # the planner's row estimate for the whole table otherwise.
    if distributed or is_narrowed(f):
        corpus_sql = (
            f"SELECT greatest(count(*), 1)::float8 AS n FROM (SELECT 1 FROM memories m"
            f" WHERE {filter_sql(f, bind)} LIMIT 10 * {cap}) scope"
        )
    else:
        corpus_sql = (
            "SELECT greatest(reltuples, 1)::float8 AS n FROM pg_class"
            " WHERE oid = 'memories'::regclass"
        )

    sql = f"""
WITH {model_check}
query_terms AS (
    SELECT t.lexeme,
           ('''' || replace(replace(t.lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery AS tsq
    FROM unnest(to_tsvector('english'::regconfig, {q})) AS t
    WHERE {kw_on}
),
corpus AS (
    {corpus_sql}
),
term_class AS (
    {readers.term_class}
),
term_hits AS (
    -- One bounded pass per other term: its matching rows (at most term_cap) give both
    -- its document frequency in the query's scope and its candidates.
    SELECT tc.lexeme, h.id, h.nth
    FROM term_class tc
    CROSS JOIN LATERAL (
        SELECT k.hit AS id, row_number() OVER () AS nth
        FROM ({readers.keyword_hits("tc.tsq")}) k
    ) h
    WHERE NOT tc.common
),
term_stats AS (
    SELECT tc.lexeme, tc.tsq, tc.common, count(th.id)::float8 AS hits,
           CASE WHEN tc.common OR count(th.id) >= {cap}
                THEN greatest(count(th.id), coalesce(tc.freq, 0) * c.n)
                ELSE count(th.id) END::float8 AS df
    FROM term_class tc
    LEFT JOIN term_hits th USING (lexeme)
    CROSS JOIN corpus c
    GROUP BY tc.lexeme, tc.tsq, tc.common, tc.freq, c.n
),
term_budget AS (
    SELECT ts.*,
           ln(1 + (greatest(c.n, ts.df) - ts.df + 0.5) / (ts.df + 0.5)) AS idf,
           -- Rarest terms first draw candidates from a shared budget of term_cap rows.
           greatest(0, least(ts.hits,
                             {cap} - (sum(ts.hits) OVER (ORDER BY ts.df, ts.lexeme) - ts.hits)))
               AS take
    FROM term_stats ts CROSS JOIN corpus c
    WHERE ts.df > 0
),
phrase AS (
    -- The query as one phrase, when it has several words: once per query, not per row
    -- (a generic plan would evaluate the function on every candidate).
    SELECT CASE WHEN numnode(pq) > 1 THEN pq END AS tsq
    FROM phraseto_tsquery('english'::regconfig, {q}) AS pq
),
all_terms AS (
    -- When only common terms match, the rows holding all of them are the candidates.
    SELECT CASE WHEN count(*) > 1 AND NOT EXISTS (SELECT 1 FROM term_stats WHERE hits > 0)
                THEN string_agg(tsq::text, ' & ')::tsquery END AS tsq
    FROM query_terms
),
vec AS (
    -- Planned on each call for its own values: HNSW or an exact scan (see the function).
    SELECT v.* FROM ({readers.vector_candidates}) v
    WHERE {vec_limit}::integer > 0
),
kw_ids AS (
    SELECT th.id FROM term_hits th JOIN term_budget tb USING (lexeme) WHERE th.nth <= tb.take
    UNION
    {all_terms_hits}
),
kw_docs AS (
    -- By primary key: the planner cannot tell how few candidates kw_ids holds, and
    -- on a join it picked a sequential scan of the tenant's rows.
    SELECT m.id, m.search_vector, length(m.search_vector)::float8 AS dl,
           m.pinned, m.last_accessed_at, m.created_at, m.access_count, m.relevance_score
    FROM memories m
    WHERE m.tenant_id = $1 AND m.id = ANY (ARRAY(SELECT id FROM kw_ids))
),
kw_raw AS MATERIALIZED (
    -- MATERIALIZED: inlined into kw, whose three uses of raw would each recompute it.
    SELECT d.id, d.pinned, d.last_accessed_at, d.created_at, d.access_count, d.relevance_score,
           (SELECT sum(tb.idf * (tf.v * ({BM25_K1} + 1))
                       / (tf.v + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * d.dl / a.avgdl)))
            FROM term_budget tb
            CROSS JOIN LATERAL (
                -- x 1.6449 undoes ts_rank's scaling: one content (A) occurrence counts 1.0.
                SELECT ts_rank('{FIELD_WEIGHTS}'::float4[], d.search_vector, tb.tsq, 0)
                       ::float8 * 1.6449 AS v
            ) tf
            WHERE d.search_vector @@ tb.tsq)
           * CASE WHEN d.search_vector @@ (SELECT tsq FROM phrase) THEN 2 ELSE 1 END AS raw
    FROM kw_docs d
    CROSS JOIN (SELECT greatest(avg(dl), 1) AS avgdl FROM kw_docs) a
),
kw AS (
    SELECT k.*, power(k.raw / nullif(max(k.raw) OVER (), 0), 2) AS keyword_score
    FROM kw_raw k
),
fused AS (
    SELECT coalesce(kw.id, vec.id) AS id,
           coalesce(vec.vector_similarity, 0) AS vector_similarity,
           coalesce(kw.keyword_score, 0) AS keyword_score,
           coalesce(kw.pinned, vec.pinned) AS pinned,
           coalesce(kw.access_count, vec.access_count) AS access_count,
           coalesce(kw.relevance_score, vec.relevance_score)::float8 AS relevance,
           coalesce(kw.last_accessed_at, vec.last_accessed_at, kw.created_at, vec.created_at)
               AS last_seen
    FROM kw FULL OUTER JOIN vec ON kw.id = vec.id
),
scored AS (
    SELECT f.id, f.vector_similarity, f.keyword_score, f.relevance,
           {alpha}::float8 * f.vector_similarity + (1 - {alpha}::float8) * f.keyword_score
               AS similarity,
           CASE WHEN f.pinned THEN 1.0::float8 ELSE exp(
               -greatest(extract(epoch FROM now() - f.last_seen), 0)
               / 86400.0 / ({strength}::float8 * (1 + f.access_count))) END AS retention
    FROM fused f
),
top AS (
    SELECT s.id, s.vector_similarity, s.keyword_score, s.similarity,
           s.similarity * s.retention AS decayed_score,
           s.similarity * ((1 - {decay_w}::float8) + {decay_w}::float8 * s.retention)
               * s.relevance AS score
    FROM scored s
    WHERE s.similarity > 0
    ORDER BY score DESC, s.id
    LIMIT 2 * {limit}
),
checked AS (
    -- A quarantined row, or one edited behind the API's back (it no longer matches its
    -- hash), is never served. Checked here, on the few rows that could be returned, not
    -- on every candidate.
    SELECT t.*, m.quarantined_at IS NULL AS unmarked, {INTACT} AS intact
    FROM top t JOIN memories m ON m.tenant_id = $1 AND m.id = t.id
),
limited AS (
    SELECT * FROM checked WHERE intact AND unmarked ORDER BY score DESC, id LIMIT {limit}
),
ranked AS (
    -- The relevance floor, before anything below it is counted as accessed.
    SELECT l.* FROM limited l
    WHERE l.score >= greatest({floor_min}::float8,
                              {floor_ratio}::float8 * (SELECT max(score) FROM limited))
),
quarantined AS (
    -- ... and mark it, so /stats counts it.
    UPDATE memories m SET quarantined_at = now()
    FROM checked c
    WHERE NOT c.intact AND c.unmarked AND m.tenant_id = $1 AND m.id = c.id
    RETURNING m.id
),
locked AS (
    -- Row locks taken in id order: concurrent searches returning the same memories in
    -- different orders would otherwise deadlock on their access counters.
    SELECT m.id FROM memories m
    WHERE {track} AND m.tenant_id = $1 AND m.id IN (SELECT id FROM ranked)
    ORDER BY m.id
    FOR NO KEY UPDATE
),
touched AS (
    UPDATE memories m
    SET access_count = m.access_count + 1, last_accessed_at = now()
    FROM locked l
    WHERE m.tenant_id = $1 AND m.id = l.id
    RETURNING m.id, m.access_count, m.last_accessed_at
),
relaxed_commit AS (
    -- Access counters are statistics, not data: the search's commit need not wait for
    -- the WAL flush (a crash may lose the last moments of counts, never a memory).
    SELECT set_config('synchronous_commit', 'off', true) AS setting
),
counts AS (
    -- One row even when nothing is returned, so that the counts always come back.
    SELECT (SELECT count(*) FROM kw) AS keyword_candidates,
           (SELECT count(*) FROM vec) AS vector_candidates, {fits} AS vectors_fit,
           (SELECT count(*) FROM limited) - (SELECT count(*) FROM ranked) AS below_floor,
           ARRAY(SELECT id FROM quarantined) AS quarantined_ids
)
SELECT {memory_columns(TOUCHED)},
       r.score, r.similarity, r.vector_similarity, r.keyword_score, r.decayed_score,
       n.keyword_candidates, n.vector_candidates, n.vectors_fit, n.below_floor,
       n.quarantined_ids
FROM counts n
CROSS JOIN relaxed_commit
LEFT JOIN (ranked r JOIN memories m ON m.tenant_id = $1 AND m.id = r.id) ON true
LEFT JOIN touched t ON t.id = r.id
ORDER BY r.score DESC, r.id
"""
    return sql, args


class SearchRepository:
    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    async def search(self, f: MemoryFilter, p: SearchParams, timeout_ms: int = 0) -> SearchOutcome:
        """`timeout_ms` (0: none) cancels the statement in the server past that time:
        SearchTimeoutError, and the transaction is rolled back."""
        sql, args = build_search_sql(f, p, self._uow.distributed, self._uow.embedding_model)
        args[0] = self._uow.tenant_id
        settings = {"statement_timeout": str(timeout_ms)}
        if not self._uow.distributed:
            # Planning this statement costs about 2 ms, a fifth of a search at 10k rows, and
            # its plan does not depend on the values: the one part whose plan does, the
            # vector side, is planned inside memory_vector_candidates() on every call. So
            # one plan per connection serves every search of the same shape. (Citus plans
            # no generic plan it could route: its values pick the shard.)
            settings["plan_cache_mode"] = "force_generic_plan"
        conn = await self._uow.connection(settings)
        try:
            rows = await conn.fetch(sql, *args)
        except asyncpg.QueryCanceledError as exc:
            raise SearchTimeoutError(
                f"the search took longer than {timeout_ms} ms and was stopped; "
                "a shorter or more specific query is cheaper"
            ) from exc
        hits = [
            SearchHit(
                memory=to_memory(row),
                score=float(row["score"]),
                similarity=float(row["similarity"]),
                vector_similarity=float(row["vector_similarity"]),
                keyword_score=float(row["keyword_score"]),
                decayed_score=float(row["decayed_score"]),
            )
            for row in rows
            if row["id"] is not None  # the counts' row when nothing is returned
        ]
        counts = rows[0]
        return SearchOutcome(
            hits,
            int(counts["keyword_candidates"]),
            int(counts["vector_candidates"]),
            int(counts["below_floor"]),
            bool(counts["vectors_fit"]),
            list(counts["quarantined_ids"]),
        )
