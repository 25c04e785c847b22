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
memory_vector_candidates(), the corpus size here.

Keyword side. The query's lexemes (english stemming, stop words dropped) are matched any-
term: conversational questions rarely contain every word of the memory they are after. A
term that ANALYZE's statistics call common (more than 5 x `term_cap` rows of the tenant's
table) takes its document frequency from those statistics and its posting list is never
read: a GIN bitmap scan costs in proportion to the rows it matches. Every other term's
matching rows are read once, at most `term_cap` of them, which gives its document frequency
in the query's scope and its candidates (one call reads them all). IDF, ln(1 + (N - df +
0.5) / (df + 0.5)), makes rare words (identifiers, error codes) count for more than common
ones. Candidates are drawn term by term, rarest first, from a shared budget of `term_cap`
rows. When only common terms match, the candidates are the rows holding all of them among
the vector side's candidates (a keyword-only search takes the first `term_cap` of them from
the index instead). Each candidate scores sum(idf(t) * tf(t, d)) with tf the field-weighted
single-term ts_rank (content A 1.0, category B 0.4, tags C 0.4, context and the words
inside camelCase identifiers D 0.2) saturated BM25-style against document length; an exact
phrase match doubles the score. keyword_score is (score / best candidate's score)^2: 0..1
within the query, 1 for the best. The square keeps a weak keyword match from outvoting a
strong vector match (docs/search.md).

Vector side: the `candidates` nearest by cosine distance, through HNSW with pgvector's
iterative scan (so filtered queries still fill up), or, for a scope small beside the graph,
by an exact read of the scope's vectors from one range of an index:
memory_vector_candidates() chooses and plans on every call, on the search's own values.

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
from app.repository.filters import filter_value, scope_parts
from app.repository.rows import INTACT, MARK_QUARANTINED, QUARANTINED, memory_columns
from app.repository.sql import named, psql_script, sql_literal, sql_text

# Tuned on the LoCoMo dev split (bench/locomo_retrieval.py): short memories want a
# low k1 (one mention is most of the evidence) and little length normalisation.
BM25_K1 = 0.6
BM25_B = 0.3
# ts_rank's weights, in its order D, C, B, A. Context (D) at a fifth of the content: a
# memory is found through the situation it came from, but its own words rank first
# (LoCoMo, context weight 0.1 / 0.2 / 0.4 / 0.7: hybrid R@10 0.740 / 0.743 / 0.739 / 0.733).
FIELD_WEIGHTS = "{0.2, 0.4, 0.4, 1.0}"
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


def _scope_size(f: MemoryFilter, s: SearchStatement, at_most: str) -> str:
    """The filtered scope's rows, counted part by part (scope_parts: from the index alone
    where the filter allows), each part up to `at_most` (SQL)."""
    return " + ".join(
        f"(SELECT count(*) FROM (SELECT 1 FROM memories m WHERE {part} LIMIT {at_most}) part)"
        for part in scope_parts(f, s.bind, tenant=":tenant_id")
    )


def _keyword_on(p: SearchParams) -> str:
    return "true" if p.alpha < 1 else "false"


# A term's hits in the keyword reader's answer (`term`: the SQL of its key).
_HITS = "postings p CROSS JOIN jsonb_array_elements_text(p.hits -> {term}) AS k(hit)"


def _term_reads(filters: str, p: SearchParams, s: SearchStatement) -> list[str]:
    """The query's terms, and what the keyword reader answers for each: its hits, or (a
    common term) its frequency."""
    # Without a vector side, the rows holding all the terms are read from the index too
    # (under the key "": _keyword).
    all_terms = s.bind(not p.uses_vectors, "all_terms")
    return [
        f"""postings AS MATERIALIZED (
    -- Each term's hits, read once through the GIN index, or for a term ANALYZE's statistics
    -- call common (more than 5 x term_cap rows) its frequency instead: a posting list
    -- every row is on is never read (memory_keyword_postings()).
    SELECT memory_keyword_postings(:tenant_id, :query, :term_cap, {filters},
                                   {all_terms}) AS hits
    WHERE {_keyword_on(p)}
)""",
        f"""query_terms AS (
    SELECT t.lexeme,
           ('''' || replace(replace(t.lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery AS tsq
    FROM unnest(to_tsvector('english'::regconfig, :query)) AS t
    WHERE {_keyword_on(p)}
)""",
        """term_class AS (
    SELECT qt.lexeme, qt.tsq, c.freq, c.freq IS NOT NULL AS common
    FROM query_terms qt
    CROSS JOIN LATERAL (
        SELECT CASE WHEN jsonb_typeof(p.hits -> qt.lexeme) = 'number'
                    THEN (p.hits ->> qt.lexeme)::real END AS freq
        FROM postings p
    ) c
)""",
        f"""term_hits AS (
    -- Each other term's matching rows (at most term_cap) give both its document frequency
    -- in the query's scope and its candidates.
    SELECT tc.lexeme, h.id, h.nth
    FROM term_class tc
    CROSS JOIN LATERAL (
        SELECT k.hit::uuid AS id, row_number() OVER () AS nth
        FROM {_HITS.format(term="tc.lexeme")}
    ) h
    WHERE NOT tc.common
)""",
    ]


def _term_weights(f: MemoryFilter, s: SearchStatement) -> list[str]:
    """Each term's document frequency and IDF, its share of the candidates' budget, and the
    query as a phrase."""
    # N for IDF: the size of the filtered scope (counted, capped, from the index alone
    # where the filter allows) when the query is filtered; ANALYZE's count of the rows of
    # the tenant's table otherwise (memory_home_rows(): on a Citus worker, its shard's).
    if f.is_narrowed:
        corpus = f"SELECT greatest({_scope_size(f, s, at_most='10 * :term_cap')}, 1)::float8 AS n"
    else:
        corpus = "SELECT greatest(memory_home_rows(memory_home(:tenant_id)), 1)::float8 AS n"
    return [
        f"""corpus AS (
    {corpus}
)""",
        """term_stats AS (
    SELECT tc.lexeme, tc.tsq, tc.common, count(th.id)::float8 AS hits,
           CASE WHEN tc.common OR count(th.id) >= :term_cap
                THEN greatest(count(th.id), coalesce(tc.freq, 0) * c.n)
                ELSE count(th.id) END::float8 AS df
    FROM term_class tc
    LEFT JOIN term_hits th USING (lexeme)
    CROSS JOIN corpus c
    GROUP BY tc.lexeme, tc.tsq, tc.common, tc.freq, c.n
)""",
        """term_budget AS (
    SELECT ts.*,
           ln(1 + (greatest(c.n, ts.df) - ts.df + 0.5) / (ts.df + 0.5)) AS idf,
           -- Rarest terms first draw candidates from a shared budget of term_cap rows.
           greatest(0, least(ts.hits,
                             :term_cap - (sum(ts.hits) OVER (ORDER BY ts.df, ts.lexeme) - ts.hits)))
               AS take
    FROM term_stats ts CROSS JOIN corpus c
    WHERE ts.df > 0
)""",
        """phrase AS (
    -- The query as one phrase, when it has several words: once per query, not per row
    -- (a generic plan would evaluate the function on every candidate).
    SELECT CASE WHEN numnode(pq) > 1 THEN pq END AS tsq
    FROM phraseto_tsquery('english'::regconfig, :query) AS pq
)""",
        """all_terms AS (
    -- When only common terms match, the rows holding all of them are the candidates.
    SELECT CASE WHEN count(*) > 1 AND NOT EXISTS (SELECT 1 FROM term_stats WHERE hits > 0)
                THEN string_agg(tsq::text, ' & ')::tsquery END AS tsq
    FROM query_terms
)""",
    ]


def _keyword(p: SearchParams) -> list[str]:
    """The candidates' BM25 scores: those the terms' budget drew, and (when only common
    terms match) the rows holding all of them."""
    # Rows holding every one of several common terms: reading the GIN index for them
    # would read each term's whole posting list, a cost that grows with the rows that
    # match. So they are looked for among the vector side's candidates; only a
    # keyword-only search reads the index (bounded by term_cap rows, not in cost), and
    # finds them under the key "", which no lexeme is.
    if p.uses_vectors:
        all_terms_hits = "SELECT v.id FROM vec v WHERE v.holds_all_terms"
    else:
        all_terms_hits = "SELECT k.hit::uuid FROM " + _HITS.format(term="''")
    return [
        f"""kw_ids AS (
    SELECT th.id FROM term_hits th JOIN term_budget tb USING (lexeme) WHERE th.nth <= tb.take
    UNION
    ({all_terms_hits})
)""",
        """kw_docs AS (
    -- By primary key: the planner cannot tell how few candidates kw_ids holds, and
    -- on a join it picked a sequential scan of the tenant's rows.
    SELECT m.id, m.search_vector, length(m.search_vector)::float8 AS dl,
           m.pinned, m.created_at, m.relevance_score
    FROM memories m
    WHERE m.tenant_id = :tenant_id AND m.id = ANY (ARRAY(SELECT id FROM kw_ids))
)""",
        f"""kw_raw AS MATERIALIZED (
    -- MATERIALIZED: inlined into kw, whose three uses of raw would each recompute it.
    SELECT d.id, d.pinned, d.created_at, d.relevance_score,
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
)""",
        """kw AS (
    SELECT k.*, power(k.raw / nullif(max(k.raw) OVER (), 0), 2) AS keyword_score
    FROM kw_raw k
)""",
    ]


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
# ranking read them when uncounted), and the counts.
_RETURNED_ACCESS = {name: f"coalesce(c.{name}, {expr})" for name, expr in RANKED_ACCESS.items()}
_OUTPUT = f"""SELECT {memory_columns(_RETURNED_ACCESS)},
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
        *_term_reads(filters, p, s),
        *_term_weights(f, s),
        *_vector(filters),  # before the keyword scores: they may draw on its rows
        *_keyword(p),
        *_fuse(),
        *_effects(),
        *_counts(),
    ]
    body = ",\n".join(stages)
    s.sql = f"WITH {body}\n{_OUTPUT}\n"
    return s
