"""The search statement's keyword side: its stages (term reads, term weights, keyword),
which app/repository/search_statement.py puts in the one statement.

The query's lexemes (english stemming, stop words dropped) are matched any-
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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.domain.filters import MemoryFilter
from app.repository.filters import scope_parts

if TYPE_CHECKING:
    from app.repository.search_statement import SearchParams, SearchStatement

# Tuned on the LoCoMo dev split (bench/locomo_retrieval.py): short memories want a
# low k1 (one mention is most of the evidence) and little length normalisation.
BM25_K1 = 0.6
BM25_B = 0.3
# ts_rank's weights, in its order D, C, B, A. Context (D) at a fifth of the content: a
# memory is found through the situation it came from, but its own words rank first
# (LoCoMo, context weight 0.1 / 0.2 / 0.4 / 0.7: hybrid R@10 0.740 / 0.743 / 0.739 / 0.733).
FIELD_WEIGHTS = "{0.2, 0.4, 0.4, 1.0}"


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


def term_reads(filters: str, p: SearchParams, s: SearchStatement) -> list[str]:
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


def term_weights(f: MemoryFilter, s: SearchStatement) -> list[str]:
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


def keyword(p: SearchParams) -> list[str]:
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
